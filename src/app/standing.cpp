// Why a ticket is where it is: next_action()'s answer for the ticket on its board, put in the
// words a person reads. The daemon acts on the same next_action(), so what is said here is
// what the daemon will do.

#include "codec/json_writer.hpp"

#include <board/app.hpp>
#include <board/board_config.hpp>
#include <board/codec.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <optional>

namespace board::app {
namespace {

using StandingKind = Standing::Kind;

Standing make(StandingKind kind, std::string turn, std::string why) {
    return Standing{kind, std::move(turn), std::move(why), {}, 0};
}

/// What the ticket alone says, or nullopt when the rest of the board matters.
std::optional<Standing> from_ticket(const TicketSummary& t) {
    if (t.status == Status::done) {
        if (t.ship_owed)
            return make(StandingKind::shipping,
                        "ship",
                        fmt::format("approved: board-daemon ships {} as board.yaml's ship: says",
                                    t.branch));
        const bool cancelled = t.resolution == Resolution::wont_do;
        return make(StandingKind::done, "-", cancelled ? "done (cancelled)" : "done (completed)");
    }
    if (t.awaiting) {
        std::string chased;
        for (const auto& chase : handoff_chases(t)) chased += ", " + chase;
        return make(
            StandingKind::awaiting,
            std::string{to_string(*t.awaiting)},
            fmt::format("waits for a person ({}, {}) since {}{}: `board show {}` says what "
                        "is asked",
                        to_string(*t.awaiting),
                        to_string(t.handoff),
                        format_timestamp(t.awaiting_since ? t.awaiting_since : t.updated_at),
                        chased,
                        t.id));
    }
    if (t.run)
        return make(StandingKind::running,
                    "running",
                    fmt::format("an agent is at work: run {} ({}) since {}",
                                t.run->id,
                                to_string(t.run->phase),
                                format_timestamp(t.run->started_at)));
    return std::nullopt;
}

std::string joined(const std::vector<std::string>& items) {
    std::string out;
    for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
    return out;
}

}  // namespace

std::string_view to_string(Standing::Kind kind) {
    static constexpr std::array<std::string_view, 10> names{"done",
                                                            "shipping",
                                                            "epic",
                                                            "awaiting",
                                                            "running",
                                                            "blocked",
                                                            "manual",
                                                            "wip_held",
                                                            "backing_off",
                                                            "agent_next"};
    return names.at(static_cast<std::size_t>(kind));
}

Standings::Standings(const Catalog& catalog, const Policy& policy, UnixMillis now)
    : catalog_(catalog)
    , policy_(policy)
    , now_(now)
    , counts_(catalog.column_facts()) {}

Standing Standings::of(const TicketSummary& t) const {
    if (t.type == TicketType::epic && catalog_.shown_status(t) == Status::done)
        return make(StandingKind::done, "-", "done: all its children are");
    if (auto alone = from_ticket(t)) return std::move(*alone);
    if (t.type == TicketType::epic) {
        const EpicProgress p = catalog_.epic_progress(t.id);
        return make(
            StandingKind::epic,
            fmt::format("{}/{} done", p.done, p.children),
            fmt::format("an epic: done when its children are ({} of {} done)", p.done, p.children));
    }
    BoardFacts facts = counts_;
    facts.blockers_done = catalog_.blockers_done(t);
    const Action action = next_action(t, policy_, facts);
    if (!facts.blockers_done) {
        Standing s = make(StandingKind::blocked, "blocked", "");
        for (const auto& id : t.blocked_by) {
            const CatalogEntry* blocker = catalog_.find(id);
            if (!blocker || catalog_.shown_status(blocker->ticket) != Status::done)
                s.blockers.push_back(blocker ? id : id + " (not on this board)");
        }
        s.why = fmt::format("blocked by {}: it moves when they are done", joined(s.blockers));
        return s;
    }
    if (const auto* idle = std::get_if<Idle>(&action)) {
        if (idle->reason == IdleReason::auto_off) {
            const bool backlog = t.status == Status::backlog;
            const std::string_view phase = backlog ? "research" : "planning";
            return make(StandingKind::manual,
                        "manual",
                        fmt::format("{} does not start by itself (auto.{} is off): `board "
                                    "start {}` starts it",
                                    phase,
                                    phase,
                                    t.id));
        }
        if (idle->reason == IdleReason::wip_limit) {
            // next_action() gives the phase it would run through phase_to_run; the column a
            // ticket in backlog or ready would enter is the next one.
            const Status phase = t.status == Status::backlog ? Status::research
                                 : t.status == Status::ready ? Status::planning
                                                             : t.status;
            const auto column = static_cast<std::size_t>(phase);
            const int limit = policy_.wip_limit(phase);
            const bool entering = phase != t.status;
            const int used = entering ? facts.in_status[column] : facts.runs_in_status[column];
            return make(
                StandingKind::wip_held,
                fmt::format("wip {}/{}", used, limit),
                entering
                    ? fmt::format("waits for room in {}: it holds {} of {} tickets (wip.{}); it "
                                  "moves when one leaves",
                                  to_string(phase),
                                  used,
                                  limit,
                                  to_string(phase))
                    : fmt::format("waits for a free {} slot: {} of {} agents are at work there "
                                  "(wip.{})",
                                  to_string(phase),
                                  used,
                                  limit,
                                  to_string(phase)));
        }
        return make(StandingKind::agent_next, "agent", std::string{to_string(idle->reason)});
    }
    if (const auto* start = std::get_if<StartRun>(&action)) {
        if (start->not_before > now_) {
            Standing s = make(StandingKind::backing_off,
                              "backoff",
                              fmt::format("its last attempt failed: attempt {} of {} ({}) starts "
                                          "after {}",
                                          start->attempt,
                                          policy_.max_attempts,
                                          to_string(start->phase),
                                          format_timestamp(start->not_before)));
            s.until = start->not_before;
            return s;
        }
        return make(StandingKind::agent_next,
                    "agent",
                    fmt::format("the agent's turn: board-daemon starts its {} run (attempt {}) "
                                "when a slot is free",
                                to_string(start->phase),
                                start->attempt));
    }
    return make(StandingKind::agent_next, "agent", "the agent's turn");
}

std::optional<UnixMillis> standings_change_at(const Picked& picked) {
    if (!picked.policy) return std::nullopt;
    std::optional<UnixMillis> earliest;
    std::optional<Standings> standings;
    for (const CatalogEntry* entry : picked.entries) {
        // Only a failed attempt makes a backoff: most boards have few, so most reads make no
        // standing here.
        if (!entry->ticket.last_failure_at) continue;
        if (!standings) standings.emplace(*picked.catalog, *picked.policy, picked.now);
        const Standing s = standings->of(entry->ticket);
        if (s.kind == Standing::Kind::backing_off)
            earliest = earliest ? std::min(*earliest, s.until) : s.until;
    }
    return earliest;
}

Result<Why> Board::why(const std::string& id) {
    auto view = show(id);
    if (!view) return std::move(view).error();
    Why out;
    out.warnings = std::move(view.value().warnings);
    out.ticket = std::move(view.value().ticket);
    if (!view.value().standing)
        return Refusal{Refusal::Kind::storage,
                       fmt::format("why {}: the board or board.yaml did not load", id),
                       std::move(out.warnings)};
    out.standing = std::move(*view.value().standing);
    out.request = request_of(out.ticket);
    auto config = load_board_config(root() / "board.yaml");
    if (config) out.policy = config.value().policy;
    const Ticket& t = out.ticket;
    if (t.awaiting && t.handoff == Handoff::gate) {
        if (t.status == Status::research) out.gate = out.policy.research_gate;
        if (t.status == Status::planning) out.gate = out.policy.planning_gate;
    }
    if (auto runs = this->runs(id)) {
        for (auto it = runs.value().rbegin(); it != runs.value().rend(); ++it) {
            if (it->end != "finished" ||
                (it->exit_code == 0 && !it->timed_out && it->error.empty()))
                continue;
            std::string what = it->timed_out ? "timed out" : fmt::format("exit {}", it->exit_code);
            if (!it->error.empty()) what += ": " + it->error;
            out.last_failure = fmt::format("run {} ({}) {}", it->id, to_string(it->phase), what);
            break;
        }
    }
    return out;
}

std::string to_json(const Why& why) {
    const Ticket& t = why.ticket;
    const Policy& p = why.policy;
    std::string out = "{\"id\":";
    codec_detail::append_json_string(out, t.id);
    out += ",\"status\":";
    codec_detail::append_json_string(out, to_string(t.status));
    out += ",\"standing\":" + standing_json(why.standing);
    if (why.request) out += ",\"request\":" + request_json(*why.request);
    out += fmt::format(
        ",\"budget\":{{\"cost_usd\":{},\"max_cost_usd\":{},\"attempts\":{},\"max_attempts\":{},"
        "\"iterations\":{},\"max_iterations\":{}}}",
        t.cost_usd,
        p.max_cost_usd,
        t.phase_attempts,
        p.max_attempts,
        t.phase_iterations,
        p.max_iterations);
    if (why.gate) {
        out += ",\"gate\":";
        codec_detail::append_json_string(out, to_string(*why.gate));
    }
    if (!why.last_failure.empty()) {
        out += ",\"last_failure\":";
        codec_detail::append_json_string(out, why.last_failure);
    }
    return out + "}\n";
}

std::string standing_json(const Standing& s) {
    using codec_detail::append_json_string;
    std::string out = "{\"kind\":";
    append_json_string(out, to_string(s.kind));
    out += ",\"turn\":";
    append_json_string(out, s.turn);
    out += ",\"why\":";
    append_json_string(out, s.why);
    out += ",\"blockers\":[";
    for (std::size_t i = 0; i < s.blockers.size(); ++i) {
        if (i > 0) out += ',';
        append_json_string(out, s.blockers[i]);
    }
    out += ']';
    if (s.until) {
        out += ",\"until\":";
        append_json_string(out, format_timestamp(s.until));
    }
    out += '}';
    return out;
}

}  // namespace board::app

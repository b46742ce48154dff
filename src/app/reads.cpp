// Every read of the board: board-wide queries through the catalog, one ticket through its log.

#include "app/log_checks.hpp"
#include "support/files.hpp"

#include <board/app.hpp>
#include <board/artifact.hpp>
#include <board/board_config.hpp>
#include <board/board_dir.hpp>
#include <board/codec.hpp>
#include <board/event_log.hpp>
#include <board/reduce.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace fs = std::filesystem;

namespace board::app {
namespace {

using Kind = Refusal::Kind;

Refusal refusal(Kind kind, std::string message, std::vector<std::string> warnings = {}) {
    return Refusal{kind, std::move(message), std::move(warnings)};
}

/// A filter naming an epic (`next EPIC`, `ready EPIC`, `list --parent`) that names none would
/// list nothing and look like an empty board: it is refused, saying what it names.
std::optional<Refusal> unless_epic(const CatalogLoad& load,
                                   const std::string& id,
                                   std::string_view action) {
    if (id.empty()) return std::nullopt;
    auto why = load.catalog.epic_error(id);
    if (!why) return std::nullopt;
    return refusal(Kind::refused, fmt::format("{}: {}", action, *why), load.warnings);
}

Picked picked(const std::shared_ptr<const CatalogLoad>& load,
              std::vector<const CatalogEntry*> entries) {
    // The catalog lives as long as the load that holds it: share ownership with it.
    return Picked{std::shared_ptr<const Catalog>(load, &load->catalog),
                  std::move(entries),
                  load->warnings,
                  {},
                  std::nullopt,
                  0};
}

Result<BoardConfig> config_of(const fs::path& root, std::string_view action) {
    auto config = load_board_config(root / "board.yaml");
    if (!config)
        return refusal(Kind::storage,
                       fmt::format("{}: board.yaml: {}", action, config.error().message));
    return std::move(config).value();
}

/// The policy a read explains standings by; a board.yaml that does not load costs the reader
/// the standings, not the read, and a warning says so.
std::optional<Policy> policy_for_standings(const fs::path& root,
                                           std::string_view action,
                                           std::vector<std::string>& warnings) {
    auto config = config_of(root, action);
    if (config) return config.value().policy;
    warnings.push_back(config.error().message + " (no standings shown)");
    return std::nullopt;
}

Picked with_standings(Picked picked, const fs::path& root, std::string_view action) {
    picked.policy = policy_for_standings(root, action, picked.warnings);
    picked.now = wall_clock_now();
    return picked;
}

}  // namespace

Board::Board(fs::path root)
    : root_(std::move(root)) {}

Result<CatalogLoad> Board::load_fresh(std::string_view action) {
    auto loaded = load_catalog(root_);
    if (auto* error = std::get_if<CatalogError>(&loaded))
        return refusal(Kind::storage, fmt::format("{}: {}", action, error->message));
    return std::move(std::get<CatalogLoad>(loaded));
}

Result<std::shared_ptr<const CatalogLoad>> Board::board_wide(std::string_view action) {
    auto fresh = load_fresh(action);
    if (!fresh) return std::move(fresh).error();
    return std::shared_ptr<const CatalogLoad>(
        std::make_shared<CatalogLoad>(std::move(fresh).value()));
}

std::optional<Standing> Board::standing_now(const Ticket& ticket,
                                            std::vector<std::string>& warnings) {
    const auto policy = policy_for_standings(root_, "show", warnings);
    if (!policy) return std::nullopt;
    const bool alone = ticket.type != TicketType::epic &&
                       (ticket.status == Status::done || ticket.awaiting || ticket.run);
    if (alone) {
        // The rest of the board cannot change what the ticket itself says: no load.
        const Catalog none;
        return Standings(none, *policy, wall_clock_now()).of(ticket);
    }
    auto load = board_wide("show");
    if (!load) {
        warnings.push_back(load.error().message + " (no standing shown)");
        return std::nullopt;
    }
    return Standings(load.value()->catalog, *policy, wall_clock_now()).of(ticket);
}

Result<Picked> Board::list(const ListFilter& filter, std::string_view for_person) {
    auto load = board_wide("list");
    if (!load) return std::move(load).error();
    const auto& board = load.value();
    if (auto refused = unless_epic(*board, filter.parent, "list --parent")) return *refused;
    auto entries = board->catalog.list(filter);
    if (!for_person.empty()) {
        auto config = config_of(root_, "list --for");
        if (!config) return std::move(config).error();
        const Policy& policy = config.value().policy;
        std::erase_if(
            entries, [&](const CatalogEntry* e) { return !is_for(e->ticket, policy, for_person); });
    }
    return with_standings(picked(board, std::move(entries)), root_, "list");
}

Result<Picked> Board::ready(const NextFilter& filter) {
    auto load = board_wide("ready");
    if (!load) return std::move(load).error();
    const auto& board = load.value();
    auto config = config_of(root_, "ready");
    if (!config) return std::move(config).error();
    if (auto refused = unless_epic(*board, filter.epic, "ready")) return *refused;
    Picked out = picked(board, board->catalog.ready(config.value().policy, filter));
    out.policy = config.value().policy;
    out.now = wall_clock_now();
    return out;
}

Result<Picked> Board::inbox() {
    auto load = board_wide("inbox");
    if (!load) return std::move(load).error();
    const auto& board = load.value();
    auto entries = board->catalog.awaiting_human({}, {});
    std::stable_sort(entries.begin(), entries.end(), [](const auto* a, const auto* b) {
        return a->ticket.updated_at < b->ticket.updated_at;
    });
    Picked out = with_standings(picked(board, std::move(entries)), root_, "inbox");
    // What each asks needs its notes and questions: the whole log of each, and an inbox is
    // short.
    for (const CatalogEntry* entry : out.entries) {
        auto loaded = load_ticket(root_ / "tickets" / entry->ticket.id);
        const auto* ok = std::get_if<Loaded>(&loaded);
        out.requests.push_back(ok ? request_of(ok->ticket) : std::nullopt);
    }
    return out;
}

Result<Next> Board::next(const NextRequest& request) {
    auto load = board_wide("next");
    if (!load) return std::move(load).error();
    const auto& board = load.value();
    if (auto refused = unless_epic(*board, request.filter.epic, "next")) return *refused;
    const CatalogEntry* chosen = nullptr;
    if (request.human) {
        chosen = board->catalog.next_for_human(request.types, request.filter);
    } else {
        auto config = config_of(root_, "next");
        if (!config) return std::move(config).error();
        chosen = board->catalog.next_for_agent(config.value().policy, request.filter);
    }
    Next out{std::nullopt, board->warnings};
    if (!chosen) return out;
    auto loaded = load_ticket(root_ / "tickets" / chosen->ticket.id);
    if (auto* error = std::get_if<LogError>(&loaded))
        return refusal(Kind::storage,
                       fmt::format("next: cannot read {}: {}", chosen->ticket.id, error->message),
                       std::move(out.warnings));
    out.ticket = std::move(std::get<Loaded>(loaded).ticket);
    return out;
}

Result<Asked> Board::questions(bool pending_only) {
    auto load = board_wide("questions");
    if (!load) return std::move(load).error();
    Asked out{{}, pending_only, load.value()->warnings};
    for (const auto& entry : load.value()->catalog.entries()) {
        if ((pending_only ? entry.questions_pending : entry.questions_total) == 0) continue;
        auto loaded = load_ticket(root_ / "tickets" / entry.ticket.id);
        if (auto* error = std::get_if<LogError>(&loaded)) {
            out.warnings.push_back(error->message);
            continue;
        }
        out.tickets.push_back(std::move(std::get<Loaded>(loaded).ticket));
    }
    return out;
}

Result<History> Board::history(const std::string& id) {
    if (!is_valid_ticket_id(id))
        return refusal(Kind::not_found,
                       fmt::format("\"{}\" is not a ticket id (expected PREFIX-N)", id));
    const auto path = root_ / "tickets" / id / log_file_name;
    History history;
    auto report = read_log(path, [&](const Event& e) { history.events.push_back(e); });
    if (const auto* error = std::get_if<LogError>(&report)) {
        if (error->kind == LogError::Kind::not_found)
            return refusal(Kind::not_found,
                           fmt::format("no ticket {} ({} does not exist)", id, path.string()));
        return refusal(Kind::storage, error->message);
    }
    history.warnings = std::get<ReadReport>(report).warnings;
    history.torn_bytes = std::get<ReadReport>(report).torn_bytes;
    return history;
}

bool keeps(const TimelineFilter& filter, const Event& e) {
    if (filter.since && e.at < *filter.since) return false;
    if (!filter.types.empty() &&
        std::find(filter.types.begin(), filter.types.end(), type_name(e.payload)) ==
            filter.types.end())
        return false;
    if (!filter.by.empty()) {
        const std::string who = to_string(e.by);
        const bool kind_only = filter.by.find(':') == std::string::npos;
        if (kind_only ? to_string(e.by.kind) != filter.by : who != filter.by) return false;
    }
    return true;
}

std::optional<Refusal> Board::each_history(
    std::string_view action,
    std::vector<std::string>& warnings,
    const std::function<void(const std::string&, std::vector<Event>&)>& visit) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(root_ / "tickets", ec)) {
        const std::string id = entry.path().filename().string();
        if (!entry.is_directory() || !is_valid_ticket_id(id)) continue;
        auto history = this->history(id);
        if (!history) {
            warnings.push_back(history.error().message);
            continue;
        }
        for (auto& w : history.value().warnings) warnings.push_back(std::move(w));
        visit(id, history.value().events);
    }
    if (ec)
        return refusal(
            Kind::storage,
            fmt::format("{}: {}: {}", action, (root_ / "tickets").string(), ec.message()));
    return std::nullopt;
}

Result<Timeline> Board::timeline(const TimelineFilter& filter) {
    Timeline out;
    if (auto refused =
            each_history("log --all", out.warnings, [&](const std::string& id, auto& events) {
                for (auto& e : events)
                    if (keeps(filter, e)) out.entries.push_back(TimelineEntry{id, std::move(e)});
            }))
        return *refused;
    std::sort(out.entries.begin(), out.entries.end(), [](const auto& a, const auto& b) {
        if (a.event.at != b.event.at) return a.event.at < b.event.at;
        if (a.ticket != b.ticket) return id_less(a.ticket, b.ticket);
        return a.event.seq < b.event.seq;
    });
    return out;
}

std::optional<UnixMillis> parse_since(std::string_view text, UnixMillis now) {
    if (auto at = parse_timestamp(text)) return at;
    if (auto ago = parse_duration(text)) return now - ago->count();
    return std::nullopt;
}

Result<StatsReport> Board::stats(UnixMillis since, UnixMillis now) {
    StatsReport out;
    std::vector<TicketMetrics> measured;
    if (auto refused = each_history("stats", out.warnings, [&](const std::string&, auto& events) {
            measured.push_back(measure(events));
        }))
        return *refused;
    out.stats = aggregate(measured, since, now);
    return out;
}

Result<std::vector<RunView>> Board::runs(const std::string& id) {
    auto history = this->history(id);
    if (!history) return std::move(history).error();
    const fs::path folder = root_ / "tickets" / id / "runs";
    std::vector<RunView> runs;
    const auto find = [&](const std::string& run) -> RunView* {
        for (auto it = runs.rbegin(); it != runs.rend(); ++it)
            if (it->id == run) return &*it;
        return nullptr;
    };
    for (const auto& e : history.value().events) {
        if (const auto* started = std::get_if<RunStarted>(&e.payload)) {
            RunView r;
            r.id = started->run;
            r.phase = started->phase;
            r.attempt = started->attempt;
            r.iteration = started->iteration;
            r.branch = started->branch;
            r.started_at = e.at;
            const std::string stem = run_file_stem(started->run, started->phase);
            r.prompt_file = folder / (stem + ".prompt.md");
            r.log_file = folder / (stem + ".log");
            runs.push_back(std::move(r));
        } else if (const auto* finished = std::get_if<RunFinished>(&e.payload)) {
            if (RunView* r = find(finished->run)) {
                r->end = "finished";
                r->ended_at = e.at;
                r->signal = finished->signal;
                r->exit_code = finished->exit_code;
                r->timed_out = finished->timed_out;
                r->error = finished->error;
                r->cost_usd = finished->cost_usd;
                r->duration_ms = finished->duration_ms;
            }
        } else if (const auto* interrupted = std::get_if<RunInterrupted>(&e.payload)) {
            if (RunView* r = find(interrupted->run)) {
                r->end = "interrupted";
                r->ended_at = e.at;
                r->error = interrupted->reason;
                r->duration_ms = e.at - r->started_at;
            }
        }
    }
    return runs;
}

Result<TicketView> Board::show(const std::string& id, std::optional<std::int64_t> until) {
    auto history = this->history(id);
    if (!history) return std::move(history).error();
    TicketView view;
    view.events = std::move(history.value().events);
    view.warnings = std::move(history.value().warnings);
    view.folded = view.events.size();
    if (until) {
        view.folded = 0;
        while (view.folded < view.events.size() && view.events[view.folded].seq <= *until)
            ++view.folded;
    }
    Folded folded = fold(std::span<const Event>(view.events.data(), view.folded));
    if (folded.failure)
        return refusal(Kind::storage,
                       fmt::format("{}: the log does not replay at seq {}: {}",
                                   id,
                                   view.events[folded.failure->first].seq,
                                   folded.failure->second.message),
                       std::move(view.warnings));
    view.ticket = std::move(folded.ticket);
    if (!until) view.standing = standing_now(view.ticket, view.warnings);
    if (auto long_log = long_log_warning(root_ / "tickets" / id, view.events.size()))
        view.warnings.push_back(fmt::format("{}: {}", id, *long_log));
    if (view.ticket.type == TicketType::epic) {
        // An epic's own log cannot say its children are done; the board can.
        auto load = board_wide("show");
        if (load) {
            const Catalog& catalog = load.value()->catalog;
            view.epic = catalog.epic_progress(id);
            view.done_by_children = view.ticket.status != Status::done &&
                                    catalog.shown_status(view.ticket) == Status::done;
        } else {
            view.warnings.push_back(
                fmt::format("{}: its children are not counted: {}", id, load.error().message));
        }
    }
    return view;
}

// ---------------------------------------------------------------------------------------------
// LiveBoard

void LiveBoard::ticket_changed(std::string_view id) {
    if (!kept_ || !is_valid_ticket_id(id)) return;
    known_.erase(std::string{id});
    stale_.emplace(id);
}

void LiveBoard::ticket_is(const Ticket& ticket) {
    if (!kept_) return;
    stale_.erase(ticket.id);
    known_.insert_or_assign(ticket.id, summarize(ticket));
}

void LiveBoard::everything_changed() {
    kept_.reset();
    stale_.clear();
    known_.clear();
}

Result<std::shared_ptr<const CatalogLoad>> LiveBoard::board_wide(std::string_view action) {
    const auto unknown_to_it = [&](const std::string& id) {
        return kept_->catalog.find(id) == nullptr;  // a new ticket: build anew
    };
    if (kept_ && (std::any_of(stale_.begin(), stale_.end(), unknown_to_it) ||
                  std::any_of(known_.begin(), known_.end(), [&](const auto& item) {
                      return unknown_to_it(item.first);
                  })))
        everything_changed();
    if (!kept_) {
        auto fresh = load_fresh(action);
        if (!fresh) return std::move(fresh).error();
        kept_ = std::make_shared<CatalogLoad>(std::move(fresh).value());
        return std::shared_ptr<const CatalogLoad>(kept_);
    }
    if (stale_.empty() && known_.empty()) return std::shared_ptr<const CatalogLoad>(kept_);
    for (const auto& id : stale_) {
        auto loaded = load_ticket(root() / "tickets" / id);
        if (std::holds_alternative<LogError>(loaded)) {
            // Left out with a warning, as a load from nothing does it.
            everything_changed();
            return board_wide(action);
        }
        known_.insert_or_assign(id, summarize(std::get<Loaded>(loaded).ticket));
    }
    stale_.clear();
    // A reader still holding the kept board (a Picked points into it) keeps it as it was: the
    // changes go into a copy. Otherwise they are made in place.
    if (kept_.use_count() > 1) {
        auto copy = std::make_shared<CatalogLoad>();
        copy->catalog = Catalog{std::vector<CatalogEntry>(kept_->catalog.entries())};
        copy->warnings = kept_->warnings;
        kept_ = std::move(copy);
    }
    for (auto& [id, entry] : known_) (void)kept_->catalog.replace(std::move(entry));
    known_.clear();
    return std::shared_ptr<const CatalogLoad>(kept_);
}

}  // namespace board::app

// `board stats`: each ticket's log folded once, the time between two events given to whoever's
// turn it was after the first of them, then summed over a window.

#include <board/codec.hpp>
#include <board/reduce.hpp>
#include <board/stats.hpp>

#include <boost/json.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace board::app {
namespace {

std::size_t at(Status s) {
    return static_cast<std::size_t>(s);
}

std::size_t at(Awaiting a) {
    return static_cast<std::size_t>(a);
}

/// Whose turn the ticket's time is while it stays as `t`.
void charge(TicketMetrics& m, const Ticket& t, UnixMillis ms) {
    if (ms <= 0 || t.id.empty() || t.status == Status::done) return;
    if (t.awaiting)
        m.human_ms[at(*t.awaiting)] += ms;
    else if (t.run)
        m.agent_ms[at(t.run->phase)] += ms;
    else
        m.queued_ms[at(t.status)] += ms;
}

}  // namespace

TicketMetrics measure(std::span<const Event> log) {
    TicketMetrics m;
    Ticket t;
    for (const Event& e : log) {
        if (!t.id.empty()) charge(m, t, e.at - t.updated_at);
        // What is compared after the event, not a copy of the whole ticket per event.
        const auto awaited = t.awaiting;
        const UnixMillis awaited_since = t.awaiting_since;
        const int runs_before = t.runs_total;
        const auto failure_before = t.last_failure_at;
        const bool was_done = t.status == Status::done;
        if (reduce_in_place(t, e)) break;
        if (awaited && awaited != t.awaiting && e.by.kind == ActorKind::human)
            m.responses.push_back({*awaited, e.at - awaited_since, e.at});
        if (t.runs_total > runs_before) ++m.runs;
        if (t.last_failure_at && t.last_failure_at != failure_before) ++m.failed_runs;
        if (t.status == Status::done && !was_done) {
            m.done_at = e.at;
            m.resolution = t.resolution;
        } else if (t.status != Status::done) {
            m.done_at.reset();
            m.resolution.reset();
        }
    }
    m.id = t.id;
    m.created_at = t.created_at;
    m.cost_usd = t.cost_usd;
    for (const Question& q : t.questions) {
        TicketMetrics::Asked asked{q.asked_at, std::nullopt, q.status == QuestionStatus::timed_out};
        if (q.status == QuestionStatus::answered && q.answered_by.kind == ActorKind::human)
            asked.answered_after_ms = q.answered_at - q.asked_at;
        m.questions.push_back(asked);
    }
    return m;
}

Spread spread_of(std::vector<UnixMillis> durations) {
    Spread s;
    if (durations.empty()) return s;
    std::sort(durations.begin(), durations.end());
    const auto rank = [&](double p) {
        const auto n = static_cast<double>(durations.size());
        const auto k = static_cast<std::size_t>(std::max(1.0, std::ceil(p * n)));
        return durations[k - 1];
    };
    s.count = static_cast<int>(durations.size());
    s.p50 = rank(0.5);
    s.p90 = rank(0.9);
    s.max = durations.back();
    return s;
}

BoardStats aggregate(std::span<const TicketMetrics> tickets, UnixMillis since, UnixMillis now) {
    BoardStats s;
    s.since = since;
    s.now = now;
    const auto inside = [&](UnixMillis t) { return t >= since && t <= now; };
    std::vector<UnixMillis> cycles;
    std::array<std::vector<UnixMillis>, all_awaitings.size()> responses;
    std::vector<UnixMillis> answers;
    for (const TicketMetrics& m : tickets) {
        if (inside(m.created_at)) ++s.created;
        for (const auto& r : m.responses)
            if (inside(r.at)) responses[at(r.kind)].push_back(r.waited_ms);
        bool asked = false;
        for (const auto& q : m.questions) {
            if (!inside(q.at)) continue;
            asked = true;
            ++s.questions;
            if (q.answered_after_ms) {
                ++s.questions_answered;
                answers.push_back(*q.answered_after_ms);
            }
            if (q.timed_out) ++s.questions_timed_out;
        }
        if (asked) ++s.tickets_asking;
        if (!m.done_at || !inside(*m.done_at)) continue;
        if (m.resolution == Resolution::wont_do) {
            ++s.cancelled;
            continue;
        }
        ++s.completed;
        cycles.push_back(*m.done_at - m.created_at);
        for (std::size_t i = 0; i < all_statuses.size(); ++i) {
            s.agent_ms[i] += m.agent_ms[i];
            s.queued_ms += m.queued_ms[i];
        }
        for (std::size_t i = 0; i < all_awaitings.size(); ++i) s.human_ms[i] += m.human_ms[i];
        s.runs += m.runs;
        s.failed_runs += m.failed_runs;
        s.cost_usd += m.cost_usd;
    }
    s.cycle = spread_of(std::move(cycles));
    for (std::size_t i = 0; i < all_awaitings.size(); ++i)
        s.responses[i] = spread_of(std::move(responses[i]));
    s.answer_time = spread_of(std::move(answers));
    return s;
}

std::string short_duration(UnixMillis ms) {
    constexpr UnixMillis second = 1000, minute = 60 * second, hour = 60 * minute, day = 24 * hour;
    if (ms < minute) return fmt::format("{}s", std::max<UnixMillis>(0, ms) / second);
    if (ms < hour) return fmt::format("{}m{:02}s", ms / minute, ms % minute / second);
    if (ms < day) return fmt::format("{}h{:02}m", ms / hour, ms % hour / minute);
    return fmt::format("{}d{}h", ms / day, ms % day / hour);
}

namespace {

std::string spread_text(const Spread& s) {
    if (s.count == 0) return "none";
    return fmt::format("p50 {} · p90 {} · max {} ({})",
                       short_duration(s.p50),
                       short_duration(s.p90),
                       short_duration(s.max),
                       s.count);
}

/// One line of the chart: a bar as long as the share, the duration and the percentage.
std::string bar(std::string_view label, UnixMillis ms, UnixMillis total) {
    constexpr int width = 24;
    const double share = total > 0 ? static_cast<double>(ms) / static_cast<double>(total) : 0.0;
    const int cells = static_cast<int>(std::lround(share * width));
    std::string drawn;
    for (int i = 0; i < width; ++i) drawn += i < cells ? "█" : "·";
    return fmt::format(
        "  {:<22} {} {:>7} {:>4.0f}%\n", label, drawn, short_duration(ms), share * 100);
}

}  // namespace

std::string render(const BoardStats& s) {
    std::string out = fmt::format(
        "board stats from {} to {}\n", format_timestamp(s.since), format_timestamp(s.now));
    out += fmt::format("throughput    {} completed, {} cancelled, {} created\n",
                       s.completed,
                       s.cancelled,
                       s.created);
    out += fmt::format("cycle time    {}\n", spread_text(s.cycle));
    out += fmt::format(
        "cost          ${:.2f} in all, ${:.2f} per completed ticket; {} runs, {} "
        "failed\n",
        s.cost_usd,
        s.completed ? s.cost_usd / s.completed : 0.0,
        s.runs,
        s.failed_runs);
    if (s.questions > 0) {
        out += fmt::format(
            "questions     {} asked by {} tickets, {} answered ({}), {} timed out ({:.0f}%)\n",
            s.questions,
            s.tickets_asking,
            s.questions_answered,
            spread_text(s.answer_time),
            s.questions_timed_out,
            100.0 * s.questions_timed_out / s.questions);
    } else {
        out += "questions     none asked\n";
    }
    bool answered = false;
    for (const Awaiting kind : all_awaitings) {
        const Spread& r = s.responses[at(kind)];
        if (r.count == 0) continue;
        if (!answered) out += "people answered\n";
        answered = true;
        out += fmt::format("  {:<12} {}\n", to_string(kind), spread_text(r));
    }
    UnixMillis total = s.queued_ms;
    for (const auto ms : s.agent_ms) total += ms;
    for (const auto ms : s.human_ms) total += ms;
    if (total == 0) return out;
    out += "where the completed tickets' time went\n";
    for (const Status phase : all_statuses)
        if (s.agent_ms[at(phase)] > 0)
            out += bar(fmt::format("agent: {}", to_string(phase)), s.agent_ms[at(phase)], total);
    for (const Awaiting kind : all_awaitings)
        if (s.human_ms[at(kind)] > 0)
            out += bar(fmt::format("a person: {}", to_string(kind)), s.human_ms[at(kind)], total);
    if (s.queued_ms > 0) out += bar("queued (agent's turn)", s.queued_ms, total);
    return out;
}

std::string to_json(const BoardStats& s) {
    namespace json = boost::json;
    const auto spread = [](const Spread& x) {
        return json::object{
            {"count", x.count}, {"p50_ms", x.p50}, {"p90_ms", x.p90}, {"max_ms", x.max}};
    };
    json::object agent, human, responses;
    for (const Status phase : all_statuses)
        if (s.agent_ms[at(phase)] > 0) agent[to_string(phase)] = s.agent_ms[at(phase)];
    for (const Awaiting kind : all_awaitings) {
        if (s.human_ms[at(kind)] > 0) human[to_string(kind)] = s.human_ms[at(kind)];
        if (s.responses[at(kind)].count > 0)
            responses[to_string(kind)] = spread(s.responses[at(kind)]);
    }
    json::object o{{"since", format_timestamp(s.since)},
                   {"until", format_timestamp(s.now)},
                   {"created", s.created},
                   {"completed", s.completed},
                   {"cancelled", s.cancelled},
                   {"cycle_time", spread(s.cycle)},
                   {"agent_ms", std::move(agent)},
                   {"human_ms", std::move(human)},
                   {"queued_ms", s.queued_ms},
                   {"responses", std::move(responses)},
                   {"questions",
                    json::object{{"asked", s.questions},
                                 {"answered", s.questions_answered},
                                 {"timed_out", s.questions_timed_out},
                                 {"tickets_asking", s.tickets_asking},
                                 {"answer_time", spread(s.answer_time)}}},
                   {"runs", s.runs},
                   {"failed_runs", s.failed_runs},
                   {"cost_usd", s.cost_usd}};
    return json::serialize(o) + "\n";
}

}  // namespace board::app

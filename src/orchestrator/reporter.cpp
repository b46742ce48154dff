#include "orchestrator/reporter.hpp"

#include <board/codec.hpp>

#include <boost/json.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <iostream>

namespace board::orchestrator {
namespace {

template <class... F>
struct Overloaded : F... {
    using F::operator()...;
};
template <class... F>
Overloaded(F...) -> Overloaded<F...>;

std::string clip(std::string_view text, std::size_t width) {
    std::string one_line{text.substr(0, text.find('\n'))};
    if (one_line.size() > width) {
        one_line.resize(width);
        // Do not cut a UTF-8 sequence in half.
        while (!one_line.empty() && (static_cast<unsigned char>(one_line.back()) & 0xC0) == 0x80)
            one_line.pop_back();
        if (!one_line.empty() && static_cast<unsigned char>(one_line.back()) >= 0xC0)
            one_line.pop_back();
        one_line += "…";
    }
    return one_line;
}

std::string elapsed(std::chrono::steady_clock::duration d) {
    const auto s = std::chrono::duration_cast<std::chrono::seconds>(d).count();
    return fmt::format("{}:{:02}", s / 60, s % 60);
}

std::string time_of_day(UnixMillis at) {
    const std::string stamp = format_timestamp(at);  // 2026-11-21T10:04:05.123Z
    return stamp.size() >= 19 ? stamp.substr(11, 8) : stamp;
}

std::string column_counts(const BoardSnapshot& s, int& awaiting) {
    std::array<int, all_statuses.size()> counts{};
    awaiting = 0;
    for (const auto& t : s.tickets) {
        if (t->type == TicketType::epic) continue;
        ++counts[static_cast<std::size_t>(t->status)];
        if (t->awaiting) ++awaiting;
    }
    std::string out;
    for (const Status st : all_statuses) {
        out += fmt::format("{}{} {}",
                           out.empty() ? "" : " · ",
                           to_string(st),
                           counts[static_cast<std::size_t>(st)]);
    }
    return out;
}

}  // namespace

std::string describe_event(const std::string& ticket, const Event& e) {
    const std::string head = fmt::format("{} {} #{} ", time_of_day(e.at), ticket, e.seq);
    const std::string body = std::visit(
        Overloaded{
            [](const Created& c) { return fmt::format("created \"{}\"", clip(c.title, 60)); },
            [](const RunStarted& r) {
                return fmt::format("run-started {} run {} (attempt {}, iteration {})",
                                   to_string(r.phase),
                                   r.run,
                                   r.attempt,
                                   r.iteration);
            },
            [](const RunFinished& r) {
                std::string what = r.timed_out        ? "timed out"
                                   : !r.error.empty() ? clip(r.error, 80)
                                   : r.exit_code != 0 ? fmt::format("exit {}", r.exit_code)
                                   : r.signal         ? std::string{to_string(*r.signal)}
                                                      : std::string{"no signal (one iteration)"};
                if (r.signal && (r.timed_out || r.exit_code != 0))
                    what += fmt::format(" (signal {})", to_string(*r.signal));
                if (!r.context.empty()) what += ": " + clip(r.context, 80);
                return fmt::format("run-finished {} after {:.1f}s: {}",
                                   r.run,
                                   static_cast<double>(r.duration_ms) / 1000.0,
                                   what);
            },
            [](const RunInterrupted& r) {
                return fmt::format("run-interrupted {}: {}", r.run, clip(r.reason, 80));
            },
            [](const ArtifactRecorded& a) {
                return fmt::format("artifact {} {}{}",
                                   a.path,
                                   to_string(a.status),
                                   a.summary.empty() ? "" : ": " + clip(a.summary, 70));
            },
            [](const NoteAdded& n) { return "note: " + clip(n.text, 90); },
            [](const VerdictGiven& v) {
                return fmt::format("verdict {}{}",
                                   to_string(v.verdict),
                                   v.note.empty() ? "" : ": " + clip(v.note, 80));
            },
            [&](const QuestionAsked& q) {
                return fmt::format("question {}.{} ({}): {}",
                                   ticket,
                                   q.question_id,
                                   to_string(q.kind),
                                   clip(q.question, 80));
            },
            [&](const QuestionAnswered& q) {
                return fmt::format("answer {}.{}: {}", ticket, q.question_id, clip(q.value, 60));
            },
            [&](const QuestionTimedOut& q) {
                return fmt::format("question {}.{} timed out", ticket, q.question_id);
            },
            [&](const QuestionCancelled& q) {
                return fmt::format("question {}.{} withdrawn", ticket, q.question_id);
            },
            [](const Shipped& s) {
                return fmt::format("shipped {} ({}){}",
                                   s.branch,
                                   to_string(s.how),
                                   s.ref.empty() ? "" : ": " + s.ref);
            },
            [](const ShipFailed& f) {
                return fmt::format("ship-failed {}: {}", f.branch, clip(f.reason, 100));
            },
            [](const HandoffReminded& r) {
                return fmt::format("reminded ({}, reminder {})", to_string(r.awaiting), r.reminder);
            },
            [](const HandoffEscalated& x) {
                return fmt::format(
                    "escalated ({}){}",
                    to_string(x.awaiting),
                    x.to.empty() ? "" : fmt::format(" to {}", fmt::join(x.to, ", ")));
            },
            [](const auto& other) { return std::string{other.type}; },
        },
        e.payload);
    return head + body + (e.by.kind == ActorKind::human ? " (by " + to_string(e.by) + ")" : "");
}

Reporter::Reporter(DaemonOptions::Output output)
    : output_(output) {}

Reporter::~Reporter() = default;

void Reporter::line(std::string_view text) {
    clear_block();
    std::cout << text << '\n';
    draw_block();
    std::cout.flush();
}

void Reporter::event(const std::string& ticket, const Event& e) {
    if (output_ == DaemonOptions::Output::json) {
        boost::json::object o;
        o["ticket"] = ticket;
        for (auto& field : event_to_json(e)) o[field.key()] = std::move(field.value());
        std::cout << boost::json::serialize(o) << '\n' << std::flush;
        return;
    }
    line(describe_event(ticket, e));
}

void Reporter::message(std::string_view text) {
    if (output_ == DaemonOptions::Output::json) {
        std::cout << boost::json::serialize(
                         boost::json::object{{"level", "info"}, {"message", text}})
                  << '\n'
                  << std::flush;
        return;
    }
    line(text);
}

void Reporter::problem(std::string_view text) {
    clear_block();
    if (output_ == DaemonOptions::Output::json) {
        std::cerr << boost::json::serialize(
                         boost::json::object{{"level", "warning"}, {"message", text}})
                  << '\n';
    } else {
        std::cerr << text << '\n';
    }
    draw_block();
    std::cout.flush();
}

void Reporter::running(const std::string& ticket,
                       Status phase,
                       const std::string& run,
                       std::shared_ptr<AgentRun> process) {
    agents_[ticket] = Agent{phase, run, std::chrono::steady_clock::now(), std::move(process)};
}

void Reporter::stopped(const std::string& ticket) {
    agents_.erase(ticket);
}

void Reporter::board(const BoardSnapshot& snapshot) {
    board_ = snapshot;
    tick();
}

void Reporter::tick() {
    if (!live()) return;
    clear_block();
    draw_block();
    std::cout.flush();
}

void Reporter::clear_block() {
    if (!live() || block_lines_ == 0) return;
    std::cout << "\x1b[" << block_lines_ << "A\x1b[J";
    block_lines_ = 0;
}

void Reporter::draw_block() {
    if (!live()) return;
    int awaiting = 0;
    const std::string counts = column_counts(board_, awaiting);
    std::cout << "\x1b[2m── " << counts << " · " << awaiting << " awaiting a human";
    if (!board_.held.empty()) std::cout << " · " << board_.held.size() << " held";
    std::cout << "\x1b[0m\n";
    block_lines_ = 1;
    constexpr std::size_t held_lines = 3;
    for (std::size_t i = 0; i < board_.held.size() && i < held_lines; ++i) {
        const auto& h = board_.held[i];
        std::cout << fmt::format(
            "\x1b[2m  {:<10} {:<12} {}\x1b[0m\n", h.id, h.standing.turn, clip(h.standing.why, 70));
        ++block_lines_;
    }
    const auto now = std::chrono::steady_clock::now();
    for (const auto& [id, a] : agents_) {
        std::cout << fmt::format("  \x1b[1m{:<10}\x1b[0m {:<12} {:>6}  {}\n",
                                 id,
                                 to_string(a.phase),
                                 elapsed(now - a.started),
                                 clip(a.process->last_line(), 70));
        ++block_lines_;
    }
}

void Reporter::summary(const BoardSnapshot& snapshot) {
    clear_block();
    board_ = snapshot;
    if (output_ == DaemonOptions::Output::json) return;
    int awaiting = 0;
    std::cout << "\nBoard: " << column_counts(snapshot, awaiting) << '\n';
    std::vector<std::shared_ptr<const Ticket>> waiting;
    for (const auto& t : snapshot.tickets)
        if (t->awaiting) waiting.push_back(t);
    if (!snapshot.held.empty()) {
        std::cout << snapshot.held.size() << " ticket(s) held back by the board:\n";
        for (const auto& h : snapshot.held)
            std::cout << fmt::format("  {:<10} {:<12} {}\n", h.id, h.standing.turn, h.standing.why);
    }
    if (waiting.empty()) {
        std::cout << "Nobody is waiting for a human.\n";
        return;
    }
    std::cout << awaiting << " ticket(s) await a human:\n";
    for (const auto& t : waiting) {
        std::string next =
            fmt::format("board approve {}   or   board reject {} \"what to change\"", t->id, t->id);
        for (const auto& q : t->questions) {
            if (q.status == QuestionStatus::pending) {
                next = fmt::format("board answer {}.{} \"...\"", t->id, q.id);
                break;
            }
        }
        if (*t->awaiting == Awaiting::input && next.rfind("board answer", 0) != 0)
            next = fmt::format("board approve {} \"your answer\"", t->id);
        if (*t->awaiting == Awaiting::work)
            next = fmt::format("board approve {} \"what you did\"  (a human does this one)", t->id);
        std::cout << fmt::format("  {:<10} {:<12} awaiting {:<10} {}\n",
                                 t->id,
                                 to_string(t->status),
                                 to_string(*t->awaiting),
                                 clip(t->title, 50));
        std::cout << fmt::format("             next: board show {}; {}\n", t->id, next);
    }
}

}  // namespace board::orchestrator

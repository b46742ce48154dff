#include "cli/history.hpp"

#include "cli/render.hpp"

#include <board/codec.hpp>
#include <board/event_log.hpp>

#include <boost/json.hpp>
#include <fmt/format.h>

#include <type_traits>

namespace board::cli {
namespace {

std::string excerpt(std::string_view text, std::size_t limit = 72) {
    std::string out;
    for (char c : text.substr(0, limit)) out += c == '\n' ? ' ' : c;
    if (text.size() > limit) out += "…";
    return fmt::format("\"{}\"", printable(out));
}

std::string payload_summary(const Payload& payload) {
    return std::visit(
        [](const auto& p) -> std::string {
            using T = std::decay_t<decltype(p)>;
            if constexpr (std::is_same_v<T, Created>) {
                return fmt::format("{} {} p{}", to_string(p.kind), excerpt(p.title), p.priority);
            } else if constexpr (std::is_same_v<T, RunStarted>) {
                return fmt::format("{} {} (attempt {}, iteration {})",
                                   to_string(p.phase),
                                   p.run,
                                   p.attempt,
                                   p.iteration);
            } else if constexpr (std::is_same_v<T, RunFinished>) {
                std::string out = p.run;
                if (p.exit_code != 0) out += fmt::format(" exit {}", p.exit_code);
                if (p.timed_out) out += " timed out";
                if (!p.error.empty()) out += " " + excerpt(p.error);
                out += p.signal ? fmt::format(" {}", to_string(*p.signal)) : " no signal";
                if (!p.context.empty()) out += ": " + excerpt(p.context);
                return out;
            } else if constexpr (std::is_same_v<T, RunInterrupted>) {
                return fmt::format("{} {}", p.run, excerpt(p.reason));
            } else if constexpr (std::is_same_v<T, ArtifactRecorded>) {
                return fmt::format("{} {} {}", to_string(p.kind), p.path, to_string(p.status));
            } else if constexpr (std::is_same_v<T, NoteAdded>) {
                return excerpt(p.text);
            } else if constexpr (std::is_same_v<T, VerdictGiven>) {
                return p.note.empty() ? std::string{to_string(p.verdict)}
                                      : fmt::format("{} {}", to_string(p.verdict), excerpt(p.note));
            } else if constexpr (std::is_same_v<T, QuestionAsked>) {
                return fmt::format(
                    "{} {} {}", p.question_id, to_string(p.kind), excerpt(p.question));
            } else if constexpr (std::is_same_v<T, QuestionAnswered>) {
                return fmt::format("{} {}", p.question_id, excerpt(p.value));
            } else if constexpr (std::is_same_v<T, QuestionTimedOut>) {
                return p.question_id;
            } else if constexpr (std::is_same_v<T, Moved>) {
                return fmt::format("to {} {}", to_string(p.to), excerpt(p.reason));
            } else if constexpr (std::is_same_v<T, Cancelled> || std::is_same_v<T, Reopened>) {
                return p.reason.empty() ? std::string{} : excerpt(p.reason);
            } else if constexpr (std::is_same_v<T, Forked>) {
                return fmt::format("{} from {} at seq {}", p.ticket, p.from, p.at_seq);
            } else if constexpr (std::is_same_v<T, Shipped>) {
                return p.ref.empty() ? fmt::format("{} {}", p.branch, to_string(p.how))
                                     : fmt::format("{} {} {}", p.branch, to_string(p.how), p.ref);
            } else if constexpr (std::is_same_v<T, ShipFailed>) {
                return fmt::format("{} {}", p.branch, excerpt(p.reason));
            } else {
                return std::string{};  // updated, started: the changes say it
            }
        },
        payload);
}

std::string json_text(const boost::json::value* v) {
    if (!v) return "–";
    if (v->is_string()) return std::string{v->get_string()};
    std::string text = boost::json::serialize(*v);
    return text.size() > 60 ? text.substr(0, 60) + "…" : text;
}

}  // namespace

std::string describe(const Event& e) {
    const std::string summary = payload_summary(e.payload);
    return fmt::format("{:>4}  {}  {:<18} {:<18}{}{}",
                       e.seq,
                       format_timestamp(e.at),
                       to_string(e.by),
                       type_name(e.payload),
                       summary.empty() ? "" : " ",
                       summary);
}

std::string describe_state(const Ticket& t) {
    std::string out{to_string(t.status)};
    if (t.resolution) out += fmt::format(" ({})", to_string(*t.resolution));
    if (t.awaiting) {
        out += fmt::format(", awaiting {} ({})", to_string(*t.awaiting), to_string(t.handoff));
    } else if (t.run) {
        out += fmt::format(", run {} in flight", t.run->id);
    } else if (t.status != Status::done) {
        out += ", agent's turn";
    }
    if (t.phase_attempts > 0) out += fmt::format(", attempts {}", t.phase_attempts);
    if (t.phase_iterations > 0) out += fmt::format(", iterations {}", t.phase_iterations);
    return out;
}

std::vector<std::string> describe_changes(const Ticket& before, const Ticket& after) {
    const auto old_json = ticket_to_json(before);
    const auto new_json = ticket_to_json(after);
    std::vector<std::string> changes;
    for (const auto& field : new_json) {
        if (field.key() == "seq" || field.key() == "updated_at") continue;
        const auto* old_value = old_json.if_contains(field.key());
        if (old_value && *old_value == field.value()) continue;
        changes.push_back(fmt::format("{}: {} → {}",
                                      std::string_view{field.key()},
                                      json_text(old_value),
                                      json_text(&field.value())));
    }
    for (const auto& field : old_json) {
        if (!new_json.contains(field.key()))
            changes.push_back(fmt::format(
                "{}: {} → –", std::string_view{field.key()}, json_text(&field.value())));
    }
    return changes;
}

}  // namespace board::cli

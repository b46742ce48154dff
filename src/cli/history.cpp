#include "cli/history.hpp"

#include "cli/render.hpp"

#include <board/board_dir.hpp>
#include <board/codec.hpp>
#include <board/event_log.hpp>

#include <boost/json.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
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
                // The limits it ran under and where to read it: what `why` a run stopped
                // needs, from the log alone.
                const auto stem = run_file_stem(p.run, p.phase);
                return fmt::format(
                    "{} {} (attempt {} of {}, iteration {} of {}; gate {}, budget {}) "
                    "runs/{}.prompt.md runs/{}.log",
                    to_string(p.phase),
                    p.run,
                    p.attempt,
                    p.policy.max_attempts,
                    p.iteration,
                    p.policy.max_iterations,
                    to_string(p.policy.gate),
                    p.policy.max_cost_usd > 0 ? fmt::format("${}", p.policy.max_cost_usd)
                                              : std::string{"unlimited"},
                    stem,
                    stem);
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
            } else if constexpr (std::is_same_v<T, QuestionCancelled>) {
                return p.reason.empty() ? p.question_id
                                        : fmt::format("{} {}", p.question_id, excerpt(p.reason));
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
            } else if constexpr (std::is_same_v<T, HandoffReminded>) {
                return fmt::format("{} reminder {}", to_string(p.awaiting), p.reminder);
            } else if constexpr (std::is_same_v<T, HandoffEscalated>) {
                return fmt::format("{} to {}",
                                   to_string(p.awaiting),
                                   p.to.empty() ? std::string{"whoever reads the board"}
                                                : fmt::format("{}", fmt::join(p.to, ", ")));
            } else {
                return std::string{};  // updated, started: the changes say it
            }
        },
        payload);
}

/// A value as a person reads it: strings quoted and clipped, numbers as written (0.21, not
/// 2.1E-1), objects as `{key: value, ...}`.
std::string value_text(const boost::json::value* v, std::size_t limit = 160) {
    if (!v) return "–";
    switch (v->kind()) {
        case boost::json::kind::string:
            return excerpt(std::string_view{v->get_string().data(), v->get_string().size()}, limit);
        case boost::json::kind::double_:
            return fmt::format("{}", v->get_double());
        case boost::json::kind::object: {
            std::string out = "{";
            for (const auto& field : v->get_object()) {
                if (out.size() > 1) out += ", ";
                out += fmt::format(
                    "{}: {}", std::string_view{field.key()}, value_text(&field.value(), 60));
            }
            return out + "}";
        }
        case boost::json::kind::array: {
            std::string out = "[";
            for (const auto& item : v->get_array()) {
                if (out.size() > 1) out += ", ";
                out += value_text(&item, 60);
            }
            return out + "]";
        }
        default:
            return boost::json::serialize(*v);
    }
}

/// The `id` of an array element that has one (questions), to match it across two versions.
const boost::json::value* element_id(const boost::json::value& v) {
    const auto* o = v.if_object();
    return o ? o->if_contains("id") : nullptr;
}

/// Lines `path: before → after` for what differs between `before` and `after`, inside objects
/// and arrays too: an element added to a list is `path: + element`, a question (matched by id)
/// that changed names the field that did (`questions[q1].status: pending → answered`).
void diff_values(const std::string& path,
                 const boost::json::value* before,
                 const boost::json::value* after,
                 std::vector<std::string>& out) {
    if (before && after && *before == *after) return;
    if (before && after && before->is_object() && after->is_object()) {
        for (const auto& field : after->get_object())
            diff_values(path + "." + std::string{field.key()},
                        before->get_object().if_contains(field.key()),
                        &field.value(),
                        out);
        for (const auto& field : before->get_object())
            if (!after->get_object().contains(field.key()))
                diff_values(path + "." + std::string{field.key()}, &field.value(), nullptr, out);
        return;
    }
    if (before && after && before->is_array() && after->is_array()) {
        const auto& a = before->get_array();
        const auto& b = after->get_array();
        const bool by_id = std::all_of(a.begin(), a.end(), element_id) &&
                           std::all_of(b.begin(), b.end(), element_id);
        if (by_id) {
            const auto find = [](const boost::json::array& in, const boost::json::value& id) {
                const auto it = std::find_if(
                    in.begin(), in.end(), [&](const auto& e) { return *element_id(e) == id; });
                return it == in.end() ? nullptr : &*it;
            };
            for (const auto& item : b) {
                const auto& id = *element_id(item);
                const std::string at =
                    path + "[" + (id.is_string() ? std::string{id.get_string()} : value_text(&id)) +
                    "]";
                if (const auto* old = find(a, id))
                    diff_values(at, old, &item, out);
                else
                    out.push_back(fmt::format("{}: + {}", path, value_text(&item)));
            }
            for (const auto& item : a)
                if (!find(b, *element_id(item)))
                    out.push_back(fmt::format("{}: − {}", path, value_text(&item)));
            return;
        }
        const std::size_t common = std::min(a.size(), b.size());
        for (std::size_t i = 0; i < common; ++i)
            diff_values(fmt::format("{}[{}]", path, i), &a[i], &b[i], out);
        for (std::size_t i = common; i < b.size(); ++i)
            out.push_back(fmt::format("{}: + {}", path, value_text(&b[i])));
        for (std::size_t i = common; i < a.size(); ++i)
            out.push_back(fmt::format("{}: − {}", path, value_text(&a[i])));
        return;
    }
    out.push_back(fmt::format("{}: {} → {}", path, value_text(before), value_text(after)));
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
    auto old_json = ticket_to_json(before);
    auto new_json = ticket_to_json(after);
    for (auto* json : {&old_json, &new_json}) {
        json->erase("seq");
        json->erase("updated_at");
    }
    std::vector<std::string> changes;
    for (const auto& field : new_json)
        diff_values(
            std::string{field.key()}, old_json.if_contains(field.key()), &field.value(), changes);
    for (const auto& field : old_json)
        if (!new_json.contains(field.key()))
            diff_values(std::string{field.key()}, &field.value(), nullptr, changes);
    return changes;
}

}  // namespace board::cli

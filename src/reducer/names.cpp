// The wire spellings of every enumeration, in one table each: the codec, the CLI and the
// reducer's messages all read them from here.

#include <board/event.hpp>
#include <board/ticket.hpp>

#include <algorithm>
#include <cstddef>
#include <string>
#include <type_traits>

namespace board {
namespace {

template <class Enum, std::size_t N>
using Names = std::array<std::string_view, N>;

constexpr Names<Status, 7> status_names{
    "backlog", "research", "ready", "planning", "implementing", "review", "done"};
constexpr Names<Resolution, 2> resolution_names{"completed", "wont_do"};
constexpr Names<ShipMethod, 3> ship_method_names{"none", "merge", "pr"};
constexpr Names<Awaiting, 7> awaiting_names{
    "work", "approval", "input", "review", "content", "escalation", "checkpoint"};
constexpr Names<Handoff, 4> handoff_names{"signal", "gate", "question", "system"};
constexpr Names<Gate, 3> gate_names{"none", "checkpoint", "approval"};
constexpr Names<TicketType, 5> ticket_type_names{"task", "bug", "feature", "chore", "epic"};
constexpr Names<ArtifactKind, 4> artifact_kind_names{
    "research", "plan", "implementation-log", "review"};
constexpr Names<ArtifactStatus, 3> artifact_status_names{"in-progress", "complete", "rejected"};
constexpr Names<ActorKind, 3> actor_kind_names{"human", "agent", "system"};
constexpr Names<QuestionKind, 4> question_kind_names{
    "blocking", "non_blocking", "approval", "error_recovery"};
constexpr Names<ResponseType, 4> response_type_names{"text", "choice", "boolean", "approval"};
constexpr Names<QuestionStatus, 4> question_status_names{
    "pending", "answered", "timeout", "cancelled"};
constexpr Names<Signal, 9> signal_names{"COMPLETE",
                                        "APPROVAL_NEEDED",
                                        "REVIEW_REQUESTED",
                                        "CONTENT_REVIEW",
                                        "INPUT_NEEDED",
                                        "BLOCKED",
                                        "ESCALATE",
                                        "CHECKPOINT",
                                        "EJECT"};
constexpr Names<Verdict, 2> verdict_names{"approved", "rejected"};

template <class Enum, std::size_t N>
std::string_view name_of(const Names<Enum, N>& names, Enum value) {
    const auto i = static_cast<std::size_t>(value);
    return i < N ? names[i] : std::string_view{"?"};
}

template <class Enum, std::size_t N>
std::optional<Enum> find_name(const Names<Enum, N>& names, std::string_view text) {
    const auto* it = std::find(names.begin(), names.end(), text);
    if (it == names.end()) return std::nullopt;
    return static_cast<Enum>(it - names.begin());
}

}  // namespace

// clang-format off
std::string_view to_string(Status v) { return name_of(status_names, v); }
std::string_view to_string(Resolution v) { return name_of(resolution_names, v); }
std::string_view to_string(ShipMethod v) { return name_of(ship_method_names, v); }
std::string_view to_string(Awaiting v) { return name_of(awaiting_names, v); }
std::string_view to_string(Handoff v) { return name_of(handoff_names, v); }
std::string_view to_string(Gate v) { return name_of(gate_names, v); }
std::string_view to_string(TicketType v) { return name_of(ticket_type_names, v); }
std::string_view to_string(ArtifactKind v) { return name_of(artifact_kind_names, v); }
std::string_view to_string(ArtifactStatus v) { return name_of(artifact_status_names, v); }
std::string_view to_string(ActorKind v) { return name_of(actor_kind_names, v); }
std::string_view to_string(QuestionKind v) { return name_of(question_kind_names, v); }
std::string_view to_string(ResponseType v) { return name_of(response_type_names, v); }
std::string_view to_string(QuestionStatus v) { return name_of(question_status_names, v); }
std::string_view to_string(Signal v) { return name_of(signal_names, v); }
std::string_view to_string(Verdict v) { return name_of(verdict_names, v); }

template <> std::optional<Status> parse<Status>(std::string_view t) { return find_name<Status>(status_names, t); }
template <> std::optional<Resolution> parse<Resolution>(std::string_view t) { return find_name<Resolution>(resolution_names, t); }
template <> std::optional<ShipMethod> parse<ShipMethod>(std::string_view t) { return find_name<ShipMethod>(ship_method_names, t); }
template <> std::optional<Awaiting> parse<Awaiting>(std::string_view t) { return find_name<Awaiting>(awaiting_names, t); }
template <> std::optional<Handoff> parse<Handoff>(std::string_view t) { return find_name<Handoff>(handoff_names, t); }
template <> std::optional<Gate> parse<Gate>(std::string_view t) { return find_name<Gate>(gate_names, t); }
template <> std::optional<TicketType> parse<TicketType>(std::string_view t) { return find_name<TicketType>(ticket_type_names, t); }
template <> std::optional<ArtifactKind> parse<ArtifactKind>(std::string_view t) { return find_name<ArtifactKind>(artifact_kind_names, t); }
template <> std::optional<ArtifactStatus> parse<ArtifactStatus>(std::string_view t) { return find_name<ArtifactStatus>(artifact_status_names, t); }
template <> std::optional<ActorKind> parse<ActorKind>(std::string_view t) { return find_name<ActorKind>(actor_kind_names, t); }
template <> std::optional<QuestionKind> parse<QuestionKind>(std::string_view t) { return find_name<QuestionKind>(question_kind_names, t); }
template <> std::optional<ResponseType> parse<ResponseType>(std::string_view t) { return find_name<ResponseType>(response_type_names, t); }
template <> std::optional<QuestionStatus> parse<QuestionStatus>(std::string_view t) { return find_name<QuestionStatus>(question_status_names, t); }
template <> std::optional<Signal> parse<Signal>(std::string_view t) { return find_name<Signal>(signal_names, t); }
template <> std::optional<Verdict> parse<Verdict>(std::string_view t) { return find_name<Verdict>(verdict_names, t); }

// clang-format on

std::string ticket_branch(std::string_view id) {
    return "board/" + std::string{id};
}

std::string to_string(const Actor& actor) {
    if (actor.kind == ActorKind::system) return "system";
    std::string out{to_string(actor.kind)};
    out += ':';
    out += actor.name;
    return out;
}

bool is_valid_actor(const Actor& actor) {
    if (actor.kind == ActorKind::system) return actor.name.empty();
    return !actor.name.empty() && std::all_of(actor.name.begin(), actor.name.end(), [](char c) {
        return static_cast<unsigned char>(c) > 0x20 && c != 0x7f;
    });
}

std::optional<Actor> parse_actor(std::string_view text) {
    if (text == "system") return Actor{ActorKind::system, {}};
    const auto colon = text.find(':');
    if (colon == std::string_view::npos) return std::nullopt;
    const auto kind = parse<ActorKind>(text.substr(0, colon));
    if (!kind || *kind == ActorKind::system) return std::nullopt;
    Actor actor{*kind, std::string{text.substr(colon + 1)}};
    if (!is_valid_actor(actor)) return std::nullopt;
    return actor;
}

bool is_valid_ticket_id(std::string_view id) {
    const auto dash = id.find('-');
    if (dash == std::string_view::npos || dash == 0 || dash > 16) return false;
    const auto prefix = id.substr(0, dash);
    const auto number = id.substr(dash + 1);
    const auto upper = [](char c) { return c >= 'A' && c <= 'Z'; };
    const auto digit = [](char c) { return c >= '0' && c <= '9'; };
    if (!upper(prefix.front())) return false;
    if (!std::all_of(prefix.begin(), prefix.end(), [&](char c) { return upper(c) || digit(c); }))
        return false;
    return !number.empty() && number.size() <= 9 &&
           std::all_of(number.begin(), number.end(), digit);
}

std::optional<ArtifactKind> artifact_of(Status phase) {
    switch (phase) {
        case Status::research:
            return ArtifactKind::research;
        case Status::planning:
            return ArtifactKind::plan;
        case Status::implementing:
            return ArtifactKind::implementation_log;
        case Status::review:
            return ArtifactKind::review;
        default:
            return std::nullopt;
    }
}

std::string_view type_name(const Payload& payload) {
    return std::visit([](const auto& p) { return std::remove_cvref_t<decltype(p)>::type; },
                      payload);
}

}  // namespace board

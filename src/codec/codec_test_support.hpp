#pragma once
// Shared by the codec tests: a sample event per payload type, edge cases, a full ticket, helpers.

#include <board/codec.hpp>

#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace Catch {

template <>
struct StringMaker<board::Event> {
    static std::string convert(const board::Event& e) { return board::encode_event(e); }
};

template <>
struct StringMaker<board::Ticket> {
    static std::string convert(const board::Ticket& t) { return board::encode_ticket(t); }
};

}  // namespace Catch

namespace board::codec_test {

inline constexpr UnixMillis t0 = 1'795'255'445'123;  // 2026-11-21T10:04:05.123Z

/// A value-initialised T, then `set` on it: the model's structs have members without default
/// initialisers, which designated initialisers may not skip under -Wmissing-field-initializers.
template <class T, class F>
T make(F set) {
    T value{};
    set(value);
    return value;
}

inline Created minimal_created() {
    return make<Created>([](auto& e) {
        e.ticket = "A-1";
        e.title = "t";
    });
}

inline RunFinished run_finished(std::string run, double cost_usd) {
    return make<RunFinished>([&](auto& e) {
        e.run = std::move(run);
        e.cost_usd = cost_usd;
    });
}

// ---------------------------------------------------------------------------------------------
// One fully populated sample per Payload alternative. make_samples() asks for every
// alternative, so adding one to Payload without a sample here does not compile.

inline Created sample(std::in_place_type_t<Created> /*type*/) {
    Created e;
    e.ticket = "PROJ-12";
    e.title = "Retry uploads";
    e.description = "Uploads fail on a \"flaky\" network.\nRetry with backoff.";
    e.kind = TicketType::bug;
    e.priority = 1;
    e.labels = {"net", "ux"};
    e.parent = "PROJ-1";
    e.blocked_by = {"PROJ-3", "PROJ-4"};
    e.requires_ = Awaiting::review;
    e.awaiting = Awaiting::work;
    e.manual = true;
    return e;
}

inline RunStarted sample(std::in_place_type_t<RunStarted> /*type*/) {
    return {.run = "r-0003",
            .phase = Status::planning,
            .attempt = 2,
            .iteration = 3,
            .policy = {.gate = Gate::approval,
                       .max_iterations = 7,
                       .max_attempts = 4,
                       .max_cost_usd = 12.5,
                       .review_agent = false},
            .branch = "board/PROJ-12"};
}

inline RunFinished sample(std::in_place_type_t<RunFinished> /*type*/) {
    return {.run = "r-0003",
            .exit_code = -9,
            .timed_out = true,
            .error = "killed after 30m",
            .permanent = true,
            .duration_ms = 1'800'000,
            .cost_usd = 0.30000000000000004,  // 0.1 + 0.2: needs exact double parsing
            .input_tokens = 12'345,
            .output_tokens = 678,
            .cache_read_tokens = 9'000'000'000,  // past 32 bits
            .cache_write_tokens = 1,
            .session = "sess-42",
            .signal = Signal::content_review,
            .context = "Please check the wording: it is \"final\""};
}

inline RunInterrupted sample(std::in_place_type_t<RunInterrupted> /*type*/) {
    return {.run = "r-0004", .reason = "daemon shutdown"};
}

inline ArtifactRecorded sample(std::in_place_type_t<ArtifactRecorded> /*type*/) {
    return {.kind = ArtifactKind::implementation_log,
            .path = "implementation-log.md",
            .status = ArtifactStatus::complete,
            .summary = "Added retry with jitter",
            .sha256 = std::string(64, 'a'),
            .gate = Gate::checkpoint};
}

inline NoteAdded sample(std::in_place_type_t<NoteAdded> /*type*/) {
    return {.text = "Résumé: 日本語, emoji 😀, tab\t, bell \x07, backslash \\"};
}

inline VerdictGiven sample(std::in_place_type_t<VerdictGiven> /*type*/) {
    return {.verdict = Verdict::rejected, .note = "Use the existing retry helper"};
}

inline QuestionAsked sample(std::in_place_type_t<QuestionAsked> /*type*/) {
    return {.question_id = "q2",
            .question = "Which backoff?",
            .kind = QuestionKind::approval,
            .response_type = ResponseType::choice,
            .options = {{.id = "a", .label = "Linear", .value = "linear", .description = "1s, 2s"},
                        {.id = "b", .label = "Exponential", .value = "exp", .description = ""}},
            .context = "The helper supports both",
            .timeout_minutes = 45,
            .default_response = "exp"};
}

inline QuestionAnswered sample(std::in_place_type_t<QuestionAnswered> /*type*/) {
    return {.question_id = "q2", .value = "linear", .note = "keep it simple"};
}

inline QuestionTimedOut sample(std::in_place_type_t<QuestionTimedOut> /*type*/) {
    return {.question_id = "q3"};
}

inline Updated sample(std::in_place_type_t<Updated> /*type*/) {
    Updated e;
    e.title = "Retry uploads (v2)";
    e.description = "";
    e.priority = 0;
    e.labels = std::vector<std::string>{};
    e.parent = "PROJ-2";
    e.blocked_by = std::vector<std::string>{"PROJ-5"};
    e.requires_.emplace(Awaiting::approval);
    e.awaiting.emplace(std::nullopt);  // cleared: the wire says "none"
    return e;
}

inline Started sample(std::in_place_type_t<Started> /*type*/) {
    return {};
}

inline Moved sample(std::in_place_type_t<Moved> /*type*/) {
    return {.to = Status::ready, .reason = "plan needs research first"};
}

inline Cancelled sample(std::in_place_type_t<Cancelled> /*type*/) {
    return {.reason = "duplicate"};
}

inline Reopened sample(std::in_place_type_t<Reopened> /*type*/) {
    return {.reason = "regressed"};
}

inline Forked sample(std::in_place_type_t<Forked> /*type*/) {
    return {.from = "PROJ-12", .at_seq = 9, .ticket = "PROJ-13"};
}

inline Shipped sample(std::in_place_type_t<Shipped> /*type*/) {
    return {.how = ShipMethod::merge, .branch = "board/PROJ-12", .ref = "3f2c1a9"};
}

inline ShipFailed sample(std::in_place_type_t<ShipFailed> /*type*/) {
    return {.branch = "board/PROJ-12", .reason = "merge conflict in src/a.cpp"};
}

inline QuestionCancelled sample(std::in_place_type_t<QuestionCancelled> /*type*/) {
    return {.question_id = "q2", .reason = "asked before the plan changed"};
}

inline HandoffReminded sample(std::in_place_type_t<HandoffReminded> /*type*/) {
    return {.awaiting = Awaiting::review, .reminder = 2};
}

inline HandoffEscalated sample(std::in_place_type_t<HandoffEscalated> /*type*/) {
    return {.awaiting = Awaiting::review, .to = {"carol", "dave"}};
}

inline Event envelope(std::int64_t seq, Payload payload) {
    return {.v = event_schema_version,
            .seq = seq,
            .id = "01JD3Q7X9K-" + std::to_string(seq),
            .at = t0 + seq,
            .by = Actor{ActorKind::agent, "planning"},
            .payload = std::move(payload)};
}

template <std::size_t... I>
std::vector<Event> make_samples(std::index_sequence<I...> /*alternatives*/) {
    std::vector<Event> events;
    (events.push_back(envelope(static_cast<std::int64_t>(I) + 1,
                               sample(std::in_place_type<std::variant_alternative_t<I, Payload>>))),
     ...);
    return events;
}

inline std::vector<Event> one_sample_per_type() {
    return make_samples(std::make_index_sequence<std::variant_size_v<Payload>>{});
}

/// Edge cases on top of the one-per-type samples: minimal payloads and the other optionals.
inline std::vector<Event> edge_samples() {
    std::vector<Event> events;
    events.push_back(envelope(1, minimal_created()));
    events.push_back(envelope(2, make<RunFinished>([](auto& e) { e.run = "r"; })));
    events.push_back(envelope(3, Updated{}));
    Updated cleared;
    cleared.requires_.emplace(std::nullopt);
    cleared.awaiting.emplace(Awaiting::escalation);
    events.push_back(envelope(4, cleared));
    events.push_back(envelope(5, make<QuestionAsked>([](auto& e) {
                                  e.question_id = "q1";
                                  e.question = "?";
                              })));
    events.push_back(envelope(6, NoteAdded{.text = ""}));
    Event human = envelope(7, VerdictGiven{Verdict::approved, ""});
    human.by = Actor{ActorKind::human, "ana"};
    human.at = -86'400'000;  // before 1970
    events.push_back(human);
    Event system = envelope(8, QuestionTimedOut{.question_id = "q1"});
    system.by = Actor{};
    system.seq = INT64_MAX;
    events.push_back(system);
    return events;
}

inline std::vector<Event> all_samples() {
    auto events = one_sample_per_type();
    for (auto& e : edge_samples()) events.push_back(std::move(e));
    return events;
}

inline Ticket full_ticket() {
    Ticket t;
    t.id = "PROJ-12";
    t.title = "Retry uploads";
    t.description = "Intent: \"never lose an upload\"";
    t.type = TicketType::feature;
    t.priority = 1;
    t.labels = {"net", "ux"};
    t.parent = "PROJ-1";
    t.blocked_by = {"PROJ-3"};
    t.status = Status::done;
    t.resolution = Resolution::wont_do;
    t.awaiting = Awaiting::checkpoint;
    t.handoff = Handoff::gate;
    t.requires_ = Awaiting::content;
    for (const ArtifactKind kind : all_artifact_kinds) {
        const auto n = static_cast<UnixMillis>(kind);
        t.artifact(kind) = Artifact{.path = std::string{to_string(kind)} + ".md",
                                    .status = ArtifactStatus::rejected,
                                    .summary = "summary " + std::to_string(n),
                                    .sha256 = std::string(64, 'f'),
                                    .created_at = t0 + n,
                                    .updated_at = t0 + 1000 + n};
    }
    t.notes = {{.from = ActorKind::human, .author = "ana", .text = "go", .at = t0},
               {.from = ActorKind::system, .author = "", .text = "budget", .at = t0 + 5}};
    t.questions = {
        {.id = "q1",
         .question = "Which backoff?",
         .kind = QuestionKind::error_recovery,
         .response_type = ResponseType::choice,
         .options = {{.id = "a", .label = "A", .value = "a", .description = "first"}},
         .context = "ctx",
         .default_response = "a",
         .asked_at = t0,
         .timeout_at = t0 + 600'000,
         .status = QuestionStatus::answered,
         .answer = "a",
         .answered_by = Actor{ActorKind::human, "bo"},
         .answered_at = t0 + 60'000},
        make<Question>([](auto& q) {
            q.id = "q2";
            q.question = "Pending?";
            q.asked_at = t0;
        }),
    };
    t.phase_attempts = 2;
    t.phase_iterations = 5;
    t.phase_started_at = t0 - 1;
    t.last_failure_at = t0 - 2;
    t.run = Run{.id = "r-0007",
                .phase = Status::review,
                .started_at = t0 + 3,
                .policy = {.gate = Gate::checkpoint,
                           .max_iterations = 1,
                           .max_attempts = 9,
                           .max_cost_usd = 0.0,
                           .review_agent = false}};
    t.last_session = "sess-9";
    t.last_run_ended_at = 1'700'000'123'000;
    t.cost_usd = 1.1 + 2.2;  // 3.3000000000000003
    t.runs_total = 11;
    t.created_at = t0 - 100;
    t.updated_at = t0 + 100;
    t.seq = 42;
    return t;
}

inline const std::string verdict_line =
    R"({"v":1,"seq":7,"id":"e7","at":"2026-11-21T10:04:05.123Z","by":"human:ana",)"
    R"("type":"verdict","verdict":"rejected","note":"Use the existing retry helper"})";

inline Event verdict_event() {
    return {.v = 1,
            .seq = 7,
            .id = "e7",
            .at = t0,
            .by = Actor{ActorKind::human, "ana"},
            .payload = VerdictGiven{Verdict::rejected, "Use the existing retry helper"}};
}

/// `text` with the first `from` replaced by `to`; the test fails if `from` is not there.
inline std::string replaced(std::string text, std::string_view from, std::string_view to) {
    const auto at = text.find(from);
    REQUIRE(at != std::string::npos);
    return text.replace(at, from.size(), to);
}

template <class T>
const T& value_of(const DecodeResult<T>& result) {
    if (!result) FAIL("decode failed: " << result.error().message);
    return result.value();
}

}  // namespace board::codec_test

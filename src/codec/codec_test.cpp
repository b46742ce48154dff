#include "codec/direct_decoder.hpp"

#include <board/codec.hpp>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
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

namespace {

using namespace board;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

constexpr UnixMillis t0 = 1'795'255'445'123;  // 2026-11-21T10:04:05.123Z

/// A value-initialised T, then `set` on it: the model's structs have members without default
/// initialisers, which designated initialisers may not skip under -Wmissing-field-initializers.
template <class T, class F>
T make(F set) {
    T value{};
    set(value);
    return value;
}

Created minimal_created() {
    return make<Created>([](auto& e) {
        e.ticket = "A-1";
        e.title = "t";
    });
}

RunFinished run_finished(std::string run, double cost_usd) {
    return make<RunFinished>([&](auto& e) {
        e.run = std::move(run);
        e.cost_usd = cost_usd;
    });
}

// ---------------------------------------------------------------------------------------------
// One fully populated sample per Payload alternative. make_samples() asks for every
// alternative, so adding one to Payload without a sample here does not compile.

Created sample(std::in_place_type_t<Created> /*type*/) {
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

RunStarted sample(std::in_place_type_t<RunStarted> /*type*/) {
    return {.run = "r-0003",
            .phase = Status::planning,
            .attempt = 2,
            .iteration = 3,
            .policy = {.gate = Gate::approval,
                       .max_iterations = 7,
                       .max_attempts = 4,
                       .max_cost_usd = 12.5,
                       .review_agent = false}};
}

RunFinished sample(std::in_place_type_t<RunFinished> /*type*/) {
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

RunInterrupted sample(std::in_place_type_t<RunInterrupted> /*type*/) {
    return {.run = "r-0004", .reason = "daemon shutdown"};
}

ArtifactRecorded sample(std::in_place_type_t<ArtifactRecorded> /*type*/) {
    return {.kind = ArtifactKind::implementation_log,
            .path = "implementation-log.md",
            .status = ArtifactStatus::complete,
            .summary = "Added retry with jitter",
            .sha256 = std::string(64, 'a'),
            .gate = Gate::checkpoint};
}

NoteAdded sample(std::in_place_type_t<NoteAdded> /*type*/) {
    return {.text = "Résumé: 日本語, emoji 😀, tab\t, bell \x07, backslash \\"};
}

VerdictGiven sample(std::in_place_type_t<VerdictGiven> /*type*/) {
    return {.verdict = Verdict::rejected, .note = "Use the existing retry helper"};
}

QuestionAsked sample(std::in_place_type_t<QuestionAsked> /*type*/) {
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

QuestionAnswered sample(std::in_place_type_t<QuestionAnswered> /*type*/) {
    return {.question_id = "q2", .value = "linear", .note = "keep it simple"};
}

QuestionTimedOut sample(std::in_place_type_t<QuestionTimedOut> /*type*/) {
    return {.question_id = "q3"};
}

Updated sample(std::in_place_type_t<Updated> /*type*/) {
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

Started sample(std::in_place_type_t<Started> /*type*/) {
    return {};
}

Moved sample(std::in_place_type_t<Moved> /*type*/) {
    return {.to = Status::ready, .reason = "plan needs research first"};
}

Cancelled sample(std::in_place_type_t<Cancelled> /*type*/) {
    return {.reason = "duplicate"};
}

Reopened sample(std::in_place_type_t<Reopened> /*type*/) {
    return {.reason = "regressed"};
}

Forked sample(std::in_place_type_t<Forked> /*type*/) {
    return {.from = "PROJ-12", .at_seq = 9, .ticket = "PROJ-13"};
}

Event envelope(std::int64_t seq, Payload payload) {
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

std::vector<Event> one_sample_per_type() {
    return make_samples(std::make_index_sequence<std::variant_size_v<Payload>>{});
}

/// Edge cases on top of the one-per-type samples: minimal payloads and the other optionals.
std::vector<Event> edge_samples() {
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

std::vector<Event> all_samples() {
    auto events = one_sample_per_type();
    for (auto& e : edge_samples()) events.push_back(std::move(e));
    return events;
}

Ticket full_ticket() {
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

const std::string verdict_line =
    R"({"v":1,"seq":7,"id":"e7","at":"2026-11-21T10:04:05.123Z","by":"human:ana",)"
    R"("type":"verdict","verdict":"rejected","note":"Use the existing retry helper"})";

Event verdict_event() {
    return {.v = 1,
            .seq = 7,
            .id = "e7",
            .at = t0,
            .by = Actor{ActorKind::human, "ana"},
            .payload = VerdictGiven{Verdict::rejected, "Use the existing retry helper"}};
}

/// `text` with the first `from` replaced by `to`; the test fails if `from` is not there.
std::string replaced(std::string text, std::string_view from, std::string_view to) {
    const auto at = text.find(from);
    REQUIRE(at != std::string::npos);
    return text.replace(at, from.size(), to);
}

template <class T>
const T& value_of(const DecodeResult<T>& result) {
    if (!result) FAIL("decode failed: " << result.error().message);
    return result.value();
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Events

TEST_CASE("codec: there is one sample per event type") {
    const auto samples = one_sample_per_type();
    REQUIRE(samples.size() == std::variant_size_v<Payload>);
    for (std::size_t i = 0; i < samples.size(); ++i) CHECK(samples[i].payload.index() == i);
}

TEST_CASE("codec: every event round-trips through its line") {
    const Event event = GENERATE(from_range(all_samples()));
    const std::string line = encode_event(event);
    CAPTURE(line);
    CHECK(line.find('\n') == std::string::npos);
    CHECK_THAT(line, Contains(R"("type":")" + std::string{type_name(event.payload)} + '"'));
    CHECK(value_of(decode_event(line)) == event);
    CHECK(value_of(decode_event(line + "\n")) == event);
    CHECK(value_of(event_from_json(boost::json::value(event_to_json(event)))) == event);
}

TEST_CASE("codec: the spec's verdict line has its exact wire form") {
    CHECK(encode_event(verdict_event()) == verdict_line);
    CHECK(value_of(decode_event(verdict_line)) == verdict_event());
}

TEST_CASE("codec: the envelope comes first, in order") {
    const auto object = event_to_json(one_sample_per_type().front());
    const std::vector<std::string_view> envelope_keys{"v", "seq", "id", "at", "by", "type"};
    std::vector<std::string_view> keys;
    for (const auto& member : object) keys.emplace_back(member.key().data(), member.key().size());
    REQUIRE(keys.size() > envelope_keys.size());
    keys.resize(envelope_keys.size());
    CHECK(keys == envelope_keys);
}

TEST_CASE("codec: payload wire names") {
    struct Case {
        std::size_t sample;
        std::string fragment;
    };

    const auto samples = one_sample_per_type();
    const auto index = [](auto type) { return Payload{type}.index(); };
    const Case c = GENERATE_COPY(values<Case>({
        {index(Created{}), R"("type":"created","ticket":"PROJ-12","title":"Retry uploads",)"},
        {index(Created{}), R"("ticket_type":"bug","priority":1,)"},
        {index(Created{}), R"("requires":"review","awaiting":"work","manual":true})"},
        {index(RunStarted{}),
         R"("policy":{"gate":"approval","max_iterations":7,"max_attempts":4,)"
         R"("max_cost_usd":12.5,"review_agent":false}})"},
        {index(RunFinished{}), R"("run":"r-0003","exit":-9,"timed_out":true,)"},
        {index(RunFinished{}), R"("cost_usd":0.30000000000000004,)"},
        {index(RunFinished{}), R"("signal":"CONTENT_REVIEW",)"},
        {index(ArtifactRecorded{}), R"("kind":"implementation-log","path":)"},
        {index(QuestionAsked{}), R"("question":"q2","text":"Which backoff?","kind":"approval",)"},
        {index(QuestionAsked{}), R"("options":[{"id":"a","label":"Linear",)"},
        {index(QuestionAsked{}), R"("timeout_minutes":45,"default_response":"exp"})"},
        {index(QuestionAnswered{}), R"("question":"q2","value":"linear")"},
        {index(QuestionTimedOut{}), R"("type":"question-timed-out","question":"q3"})"},
        {index(Updated{}), R"("labels":[],"parent":"PROJ-2",)"},
        {index(Updated{}), R"("requires":"approval","awaiting":"none"})"},
        {index(Started{}), R"("type":"started"})"},
        {index(Moved{}), R"("status":"ready","reason":)"},
        {index(Forked{}), R"("from":"PROJ-12","at_seq":9,"ticket":"PROJ-13"})"},
    }));
    CHECK_THAT(encode_event(samples[c.sample]), Contains(c.fragment));
}

TEST_CASE("codec: updated: an absent field is not written") {
    const std::string line = encode_event(envelope(1, Updated{}));
    CHECK_THAT(line, Contains(R"("type":"updated"})"));
}

TEST_CASE("codec: created: legacy manual is written only when set") {
    CHECK_THAT(encode_event(envelope(1, minimal_created())), !Contains("manual"));
}

TEST_CASE("codec: absent optional fields take the model's defaults") {
    const std::string head =
        R"({"v":1,"seq":1,"id":"x","at":"2026-11-21T10:04:05.123Z","by":"system",)";
    SECTION("created") {
        const auto event =
            value_of(decode_event(head + R"("type":"created","ticket":"A-1","title":"t"})"));
        CHECK(std::get<Created>(event.payload) == minimal_created());
    }
    SECTION("run-finished") {
        const auto event = value_of(
            decode_event(head + R"("type":"run-finished","run":"r","exit":0,"cost_usd":1})"));
        CHECK(std::get<RunFinished>(event.payload) == run_finished("r", 1.0));
    }
}

TEST_CASE("codec: unknown fields are ignored") {
    const std::string line =
        replaced(verdict_line, R"("type")", R"("later":{"nested":[1,null,{"x":true}]},"type")");
    CHECK(value_of(decode_event(line)) == verdict_event());
}

TEST_CASE("codec: decode errors name the field") {
    struct Case {
        std::string name;
        std::string line;
        std::string field;
        std::string message;  ///< a fragment of the message
    };

    const std::string run_started = encode_event(one_sample_per_type()[1]);
    const std::string question_asked = encode_event(one_sample_per_type()[7]);
    const std::string created = encode_event(one_sample_per_type()[0]);
    const Case c = GENERATE_COPY(values<Case>({
        {"unknown type",
         replaced(verdict_line, "\"verdict\",", "\"frobnicate\","),
         "type",
         R"(unknown event type "frobnicate")"},
        {"missing field",
         replaced(verdict_line, R"("verdict":"rejected",)", ""),
         "verdict",
         R"(missing field "verdict")"},
        {"missing title",
         replaced(created, R"("title":"Retry uploads",)", ""),
         "title",
         R"(missing field "title")"},
        {"missing envelope field",
         replaced(verdict_line, R"("id":"e7",)", ""),
         "id",
         R"(missing field "id")"},
        {"wrong type",
         replaced(verdict_line, R"("seq":7)", R"("seq":"7")"),
         "seq",
         R"(field "seq": expected an integer, got a string)"},
        {"null is not absent",
         replaced(verdict_line, R"("note":"Use the existing retry helper")", R"("note":null)"),
         "note",
         R"(field "note": expected a string, got null)"},
        {"fraction for an integer",
         replaced(verdict_line, R"("seq":7)", R"("seq":7.5)"),
         "seq",
         "expected an integer, got a number"},
        {"newer version",
         replaced(verdict_line, R"("v":1)", R"("v":3)"),
         "v",
         "schema version 3 is newer than this build reads (1)"},
        {"version zero",
         replaced(verdict_line, R"("v":1)", R"("v":0)"),
         "v",
         R"(field "v": schema version 0 is not valid)"},
        {"newer version before unknown type",
         replaced(replaced(verdict_line, R"("v":1)", R"("v":2)"), "\"verdict\",", "\"new\","),
         "v",
         "schema version 2 is newer"},
        {"invalid JSON", verdict_line.substr(0, 40), "", "invalid JSON at offset 40"},
        {"trailing garbage",
         verdict_line + " x",
         "",
         "invalid JSON at offset " + std::to_string(verdict_line.size() + 1) + ": extra data"},
        {"empty line", "", "", "invalid JSON at offset 0"},
        {"invalid UTF-8",
         replaced(verdict_line, "existing", "exi\xffsting"),
         "",
         "invalid UTF-8 at offset " + std::to_string(verdict_line.find("existing") + 3)},
        {"not an object", "[1,2]", "", "expected a JSON object, got an array"},
        {"bad timestamp",
         replaced(verdict_line, "2026-11-21T10:04:05.123Z", "2026-11-21 10:04:05.123Z"),
         "at",
         R"(field "at": "2026-11-21 10:04:05.123Z" is not a UTC timestamp)"},
        {"bad enum value",
         replaced(verdict_line, R"("rejected")", R"("maybe")"),
         "verdict",
         R"(field "verdict": unknown value "maybe")"},
        {"bad actor",
         replaced(verdict_line, "human:ana", "robot"),
         "by",
         R"(field "by": "robot" is not an actor)"},
        {"empty actor name",
         replaced(verdict_line, "human:ana", "human:"),
         "by",
         "is not an actor"},
        {"nested field",
         replaced(run_started, R"("gate":"approval")", R"("gate":"sometimes")"),
         "policy.gate",
         R"(field "policy.gate": unknown value "sometimes")"},
        {"missing nested field",
         replaced(run_started, R"("max_attempts":4,)", ""),
         "policy.max_attempts",
         R"(missing field "policy.max_attempts")"},
        {"array element",
         replaced(question_asked, R"({"id":"b",)", "{"),
         "options[1].id",
         R"(missing field "options[1].id")"},
        {"int out of range",
         replaced(created, R"("priority":1)", R"("priority":4294967296)"),
         "priority",
         R"(field "priority": 4294967296 is out of range)"},
        {"int64 out of range",
         replaced(verdict_line, R"("seq":7)", R"("seq":9223372036854775808)"),
         "seq",
         "9223372036854775808 is out of range"},
        {"not finite",
         replaced(run_started, R"("max_cost_usd":12.5)", R"("max_cost_usd":1e400)"),
         "policy.max_cost_usd",
         "expected a finite number"},
        {"updated: bad clearable",
         R"({"v":1,"seq":1,"id":"x","at":"2026-11-21T10:04:05.123Z",)"
         R"("by":"system","type":"updated","awaiting":"nobody"})",
         "awaiting",
         R"(field "awaiting": unknown value "nobody")"},
        {"signal spelling is case-sensitive",
         replaced(encode_event(one_sample_per_type()[2]), "CONTENT_REVIEW", "content_review"),
         "signal",
         R"(unknown value "content_review")"},
        {"long values are shortened",
         replaced(verdict_line, "human:ana", std::string(200, 'x')),
         "by",
         R"(xxx..." is not an actor)"},
    }));
    CAPTURE(c.name, c.line);
    const auto result = decode_event(c.line);
    REQUIRE_FALSE(result);
    CHECK(result.error().field == c.field);
    CHECK_THAT(result.error().message, Contains(c.message));
    if (!c.field.empty()) CHECK_THAT(result.error().message, Contains('"' + c.field + '"'));
}

TEST_CASE("codec: invalid UTF-8 in a line is reported as such") {
    struct Case {
        std::string bytes;
        std::size_t offset;  ///< of the first bad byte within `bytes`
    };

    const Case c = GENERATE(values<Case>({
        {"\xff", 0},
        {"ok\x80", 2},            // a continuation byte alone
        {"\xc0\xaf", 0},          // overlong '/'
        {"\xe2\x28\xa1", 0},      // a lead byte followed by ASCII
        {"\xed\xa0\x80", 0},      // a surrogate
        {"\xf4\x90\x80\x80", 0},  // above U+10FFFF
        {"\xc3", 0},              // cut short by the closing quote
    }));
    const std::size_t at = verdict_line.find("existing");
    const std::string line = replaced(verdict_line, "existing", c.bytes);
    const auto result = decode_event(line);
    REQUIRE_FALSE(result);
    CHECK(result.error().field.empty());
    CHECK(result.error().message == "invalid UTF-8 at offset " + std::to_string(at + c.offset));
}

TEST_CASE("codec: every truncation of a line is a clean error") {
    EventDecoder decoder;
    for (const Event& event : all_samples()) {
        const std::string line = encode_event(event);
        for (std::size_t n = 0; n < line.size(); ++n) {
            CAPTURE(line, n);
            REQUIRE_FALSE(decoder.decode(std::string_view{line}.substr(0, n)));
        }
    }
}

TEST_CASE("codec: corrupted lines never crash the decoder") {
    std::mt19937 random{20261121};
    EventDecoder decoder;
    const auto samples = all_samples();
    for (int round = 0; round < 5000; ++round) {
        std::string line = encode_event(samples[random() % samples.size()]);
        for (int flips = 1 + static_cast<int>(random() % 3); flips > 0; --flips)
            line[random() % line.size()] = static_cast<char>(random() % 256);
        const auto result = decoder.decode(line);
        if (!result) CHECK_FALSE(result.error().message.empty());
    }
}

TEST_CASE("codec: the encoder replaces invalid UTF-8 so the line reads back") {
    struct Case {
        std::string text;
        std::string expected;
    };

    const std::string fffd = "\xEF\xBF\xBD";
    const Case c = GENERATE_COPY(values<Case>({
        {"a\xff"
         "b",
         "a" + fffd + "b"},
        {"\xc0\xaf", fffd + fffd},                        // overlong '/'
        {"\xed\xa0\x80", fffd + fffd + fffd},             // a surrogate
        {"\xf4\x90\x80\x80", fffd + fffd + fffd + fffd},  // above U+10FFFF
        {"cut \xe2\x82", "cut " + fffd + fffd},           // truncated euro sign
        {"ok \xe2\x82\xac \xf0\x9f\x98\x80", "ok \xe2\x82\xac \xf0\x9f\x98\x80"},
        {std::string("nul\0byte", 8), std::string("nul\0byte", 8)},
    }));
    const std::string line = encode_event(envelope(1, NoteAdded{c.text}));
    const auto decoded = value_of(decode_event(line));
    CHECK(std::get<NoteAdded>(decoded.payload).text == c.expected);
    CHECK(boost::json::parse(line).is_object());  // Boost's own parser agrees
}

TEST_CASE("codec: long texts are escaped in slices without splitting a character") {
    // The writer escapes long strings 1 KiB at a time; shifting the text moves every kind of
    // character across the slice boundaries.
    struct Case {
        std::string piece;
        std::string expected;
    };

    const std::string fffd = "\xEF\xBF\xBD";
    const Case c = GENERATE_COPY(values<Case>({
        {"ab\"\n\xc3\xa9\xf0\x9f\x98\x80\x01z", "ab\"\n\xc3\xa9\xf0\x9f\x98\x80\x01z"},
        {"ab\xff\xf0\x9f\x98\x80\xe2\x82"
         "c",
         "ab" + fffd + "\xf0\x9f\x98\x80" + fffd + fffd + "c"},
        {"\xf0\x9f\x98\x80\x80\x80\x80x", "\xf0\x9f\x98\x80" + fffd + fffd + fffd + "x"},
    }));
    for (std::size_t shift = 0; shift < 16; ++shift) {
        std::string text(shift, 's');
        std::string expected(shift, 's');
        while (text.size() < 5000) {
            text += c.piece;
            expected += c.expected;
        }
        const auto decoded = value_of(decode_event(encode_event(envelope(1, NoteAdded{text}))));
        REQUIRE(std::get<NoteAdded>(decoded.payload).text == expected);
    }
}

TEST_CASE("codec: doubles round-trip exactly") {
    // Boost.JSON 1.81's own parser misreads about one in ten of these; the codec must not.
    std::mt19937_64 random{7};
    EventDecoder decoder;
    double total = 0.0;
    for (int i = 0; i < 2000; ++i) {
        total += static_cast<double>(random() % 100'000) / 10'000.0;
        const Event event = envelope(1, run_finished("r", total));
        const auto decoded = decoder.decode(encode_event(event));
        REQUIRE(value_of(decoded) == event);
    }
}

TEST_CASE("codec: one decoder reads many lines, long and short, good and bad") {
    EventDecoder decoder;
    const auto samples = all_samples();
    const Event long_note = envelope(99, NoteAdded{std::string(20'000, 'n')});
    for (int pass = 0; pass < 3; ++pass) {
        for (const Event& event : samples) {
            CHECK(value_of(decoder.decode(encode_event(event))) == event);
            CHECK_FALSE(decoder.decode("{\"v\":1"));
        }
        CHECK(value_of(decoder.decode(encode_event(long_note))) == long_note);
    }
    EventDecoder moved = std::move(decoder);
    CHECK(value_of(moved.decode(verdict_line)) == verdict_event());
    CHECK(value_of(decoder.decode(verdict_line)) ==
          verdict_event());  // NOLINT(bugprone-use-after-move)
}

TEST_CASE("codec: one decoder reads any number of long lines") {
    // Lines that outgrow the decoder's arena buffer, many times over: its memory must not
    // grow from one line to the next (a reused monotonic_resource would double each time).
    EventDecoder decoder;
    const Event long_note = envelope(1, NoteAdded{std::string(64 * 1024, 'n')});
    const std::string line = encode_event(long_note);
    for (int i = 0; i < 200; ++i) REQUIRE(value_of(decoder.decode(line)) == long_note);
}

TEST_CASE("codec: append_event leaves what the buffer held") {
    // The writer uses the string's tail as scratch space while it writes.
    const std::string before(100'000, 'x');
    std::string batch = before;
    append_event(batch, verdict_event());
    CHECK(batch.size() == before.size() + verdict_line.size());
    CHECK(batch.compare(0, before.size(), before) == 0);
    CHECK(batch.substr(before.size()) == verdict_line);
}

TEST_CASE("codec: append_event appends lines to one buffer") {
    std::string batch;
    for (const Event& event : one_sample_per_type()) {
        append_event(batch, event);
        batch += '\n';
    }
    std::size_t start = 0;
    for (const Event& event : one_sample_per_type()) {
        const auto end = batch.find('\n', start);
        CHECK(value_of(decode_event(std::string_view{batch}.substr(start, end - start))) == event);
        start = end + 1;
    }
}

// ---------------------------------------------------------------------------------------------
// Timestamps

TEST_CASE("codec: timestamps round-trip") {
    struct Case {
        std::string text;
        UnixMillis ms;
    };

    const Case c = GENERATE(values<Case>({
        {"1970-01-01T00:00:00.000Z", 0},
        {"1970-01-01T00:00:00.001Z", 1},
        {"1969-12-31T23:59:59.999Z", -1},
        {"2000-01-01T00:00:00.000Z", 946'684'800'000},
        {"2000-02-29T12:00:00.000Z", 951'825'600'000},
        {"2024-02-29T23:59:59.999Z", 1'709'251'199'999},
        {"2026-11-21T10:04:05.123Z", t0},
        {"2100-03-01T00:00:00.000Z", 4'107'542'400'000},
        {"1900-03-01T00:00:00.000Z", -2'203'891'200'000},
        {"1600-02-29T00:00:00.000Z", -11'670'998'400'000},
        {"0001-01-01T00:00:00.000Z", -62'135'596'800'000},
        {"0000-01-01T00:00:00.000Z", min_timestamp},
        {"9999-12-31T23:59:59.999Z", max_timestamp},
    }));
    CHECK(format_timestamp(c.ms) == c.text);
    CHECK(parse_timestamp(c.text) == c.ms);
}

TEST_CASE("codec: every millisecond format round-trips") {
    std::mt19937_64 random{1};
    for (int i = 0; i < 100'000; ++i) {
        const auto span = static_cast<std::uint64_t>(max_timestamp - min_timestamp) + 1;
        const UnixMillis ms = min_timestamp + static_cast<UnixMillis>(random() % span);
        REQUIRE(parse_timestamp(format_timestamp(ms)) == ms);
    }
}

TEST_CASE("codec: fractional seconds: none to nine digits, truncated to milliseconds") {
    struct Case {
        std::string text;
        UnixMillis ms;
    };

    const UnixMillis second = t0 - 123;
    const Case c = GENERATE_COPY(values<Case>({
        {"2026-11-21T10:04:05Z", second},
        {"2026-11-21T10:04:05.1Z", second + 100},
        {"2026-11-21T10:04:05.12Z", second + 120},
        {"2026-11-21T10:04:05.1239Z", second + 123},
        {"2026-11-21T10:04:05.999999999Z", second + 999},
        {"1969-12-31T23:59:59.9999Z", -1},
    }));
    CHECK(parse_timestamp(c.text) == c.ms);
}

TEST_CASE("codec: malformed timestamps are refused") {
    const std::string text = GENERATE(values<std::string>({
        "",
        "2026-11-21",
        "2026-11-21T10:04Z",
        "2026-11-21T10:04:05.123",   // no zone
        "2026-11-21T10:04:05.123z",  // lower case
        "2026-11-21t10:04:05.123Z",
        "2026-11-21T10:04:05.123+00:00",  // offsets: only Z
        "2026-11-21 10:04:05.123Z",
        " 2026-11-21T10:04:05.123Z",
        "2026-11-21T10:04:05.123Z ",
        "2026-11-21T10:04:05.Z",  // a dot needs digits
        "2026-11-21T10:04:05,123Z",
        "2026-11-21T10:04:05.1234567890Z",  // ten digits
        "2026-11-21T10:04:05.12aZ",
        "+2026-11-21T10:04:05.123Z",
        "-0001-01-01T00:00:00.000Z",
        "12026-11-21T10:04:05.123Z",
        "2026-13-01T00:00:00.000Z",
        "2026-00-01T00:00:00.000Z",
        "2026-11-00T00:00:00.000Z",
        "2026-11-31T00:00:00.000Z",
        "2023-02-29T00:00:00.000Z",  // not a leap year
        "1900-02-29T00:00:00.000Z",  // century, not a leap year
        "2026-11-21T24:00:00.000Z",
        "2026-11-21T10:60:00.000Z",
        "2026-11-21T10:04:60.000Z",  // no leap seconds
        "2026-1-21T10:04:05.123Z",
        "２０２６-11-21T10:04:05.123Z",
    }));
    CAPTURE(text);
    CHECK_FALSE(parse_timestamp(text));
}

TEST_CASE("codec: timestamps outside years 0000-9999 are clamped when written") {
    CHECK(format_timestamp(max_timestamp + 1) == "9999-12-31T23:59:59.999Z");
    CHECK(format_timestamp(INT64_MAX) == "9999-12-31T23:59:59.999Z");
    CHECK(format_timestamp(INT64_MIN) == "0000-01-01T00:00:00.000Z");
}

// ---------------------------------------------------------------------------------------------
// Tickets

TEST_CASE("codec: a ticket with every field populated round-trips") {
    const Ticket ticket = full_ticket();
    const std::string json = encode_ticket(ticket);
    CAPTURE(json);
    CHECK(value_of(decode_ticket(json)) == ticket);
    CHECK(value_of(ticket_from_json(boost::json::value(ticket_to_json(ticket)))) == ticket);
}

TEST_CASE("codec: a new ticket round-trips") {
    CHECK(value_of(decode_ticket(encode_ticket(Ticket{}))) == Ticket{});
}

TEST_CASE("codec: a ticket that never ran or failed carries no dates of either") {
    const std::string json = encode_ticket(Ticket{});
    CHECK_THAT(json, !Catch::Contains("last_run_ended_at"));
    CHECK_THAT(json, !Catch::Contains("last_failure_at"));
}

TEST_CASE("codec: ticket fields have the names and order of state-machine.md §2") {
    const auto object = ticket_to_json(full_ticket());
    std::vector<std::string_view> keys;
    for (const auto& member : object) keys.emplace_back(member.key().data(), member.key().size());
    const std::vector<std::string_view> expected{"id",
                                                 "title",
                                                 "description",
                                                 "type",
                                                 "priority",
                                                 "labels",
                                                 "parent",
                                                 "blocked_by",
                                                 "status",
                                                 "resolution",
                                                 "awaiting",
                                                 "handoff",
                                                 "requires",
                                                 "artifacts",
                                                 "notes",
                                                 "questions",
                                                 "phase_attempts",
                                                 "phase_iterations",
                                                 "phase_started_at",
                                                 "last_failure_at",
                                                 "run",
                                                 "last_run_ended_at",
                                                 "last_session",
                                                 "cost_usd",
                                                 "runs_total",
                                                 "created_at",
                                                 "updated_at",
                                                 "seq"};
    CHECK(keys == expected);
}

TEST_CASE("codec: ticket nested wire forms") {
    const std::string json = encode_ticket(full_ticket());
    const std::string fragment = GENERATE(values<std::string>({
        R"("artifacts":{"research":{"path":"research.md","status":"rejected",)",
        R"("implementation-log":{"path":"implementation-log.md",)",
        R"("notes":[{"from":"human","author":"ana","text":"go","at":"2026-11-21T10:04:05.123Z"},)",
        R"("answered_by":"human:bo","answered_at":"2026-11-21T10:05:05.123Z"})",
        // A pending question carries no answer fields.
        R"({"id":"q2","question":"Pending?","kind":"blocking","response_type":"text",)"
        R"("options":[],"context":"","asked_at":"2026-11-21T10:04:05.123Z","status":"pending"}])",
        R"("run":{"id":"r-0007","phase":"review","started_at":"2026-11-21T10:04:05.126Z",)"
        R"("policy":{"gate":"checkpoint",)",
        R"("cost_usd":3.3000000000000003,)",
    }));
    CHECK_THAT(json, Contains(fragment));
}

TEST_CASE("codec: absent ticket fields take the model's defaults") {
    Ticket expected;
    expected.id = "PROJ-1";
    CHECK(value_of(decode_ticket(R"({"id":"PROJ-1"})")) == expected);
}

TEST_CASE("codec: a legacy manual ticket reads as awaiting work") {
    const auto ticket = value_of(decode_ticket(R"({"id":"PROJ-1","manual":true})"));
    CHECK(ticket.awaiting == Awaiting::work);
    const auto kept =
        value_of(decode_ticket(R"({"id":"PROJ-1","manual":true,"awaiting":"input"})"));
    CHECK(kept.awaiting == Awaiting::input);
}

TEST_CASE("codec: ticket decode errors name the field") {
    struct Case {
        std::string json;
        std::string field;
        std::string message;
    };

    const std::string full = encode_ticket(full_ticket());
    const Case c = GENERATE_COPY(values<Case>({
        {R"({"title":"no id"})", "id", R"(missing field "id")"},
        {R"({"id":"A-1","artifacts":{"diagram":{"path":"d.md"}}})",
         "artifacts.diagram",
         R"(unknown artifact kind "diagram")"},
        {R"({"id":"A-1","artifacts":{"plan":{"status":"complete"}}})",
         "artifacts.plan.path",
         R"(missing field "artifacts.plan.path")"},
        {replaced(full, R"("kind":"blocking")", R"("kind":"urgent")"),
         "questions[1].kind",
         R"(unknown value "urgent")"},
        {replaced(full, R"("answered_by":"human:bo")", R"("answered_by":"bo")"),
         "questions[0].answered_by",
         "is not an actor"},
        {replaced(full, R"("status":"done")", R"("status":"Done")"), "status", "unknown value"},
        {R"({"id":"A-1","labels":"net"})", "labels", "expected an array, got a string"},
        {R"({"id":"A-1","labels":["net",7]})", "labels[1]", "expected a string, got an integer"},
        {R"({"id":"A-1","run":{"phase":"review"}})", "run.id", R"(missing field "run.id")"},
        {R"({"id":"A-1","created_at":1795255445123})",
         "created_at",
         "expected a string, got an integer"},
        {R"({"id":"A-1"} {})", "", "invalid JSON"},
        {"[]", "", "expected a JSON object, got an array"},
    }));
    CAPTURE(c.json);
    const auto result = decode_ticket(c.json);
    REQUIRE_FALSE(result);
    CHECK(result.error().field == c.field);
    CHECK_THAT(result.error().message, Contains(c.message));
}

// ---------------------------------------------------------------------------------------------
// The direct path (no JSON document) against the document path: whatever the direct path
// accepts, it must decode exactly as the document path does. What it refuses goes to the
// document path, which words the error, so refusing is always safe; accepting never is.

namespace {

using codec_detail::decode_event_document;
using codec_detail::DirectEventDecoder;

/// Checks one line: if the direct path accepts it, the document path accepts it too, with the
/// same event. Returns whether the direct path accepted it.
bool direct_agrees(DirectEventDecoder& direct, const std::string& line) {
    Event event;
    const bool accepted = direct.decode(line, event);
    if (accepted) {
        CAPTURE(line);
        const auto document = decode_event_document(line);
        REQUIRE(document);
        REQUIRE(document.value() == event);
    }
    return accepted;
}

/// A JSON value of some kind, for replacing a field's value with.
boost::json::value some_value(std::mt19937& random) {
    static const std::vector<std::string> texts = {
        R"(null)",
        R"(true)",
        R"(false)",
        R"(0)",
        R"(-1)",
        R"(2147483648)",
        R"(-2147483649)",
        R"(9223372036854775807)",
        R"(18446744073709551615)",
        R"(1.5)",
        R"(-0.0)",
        R"(1e-400)",
        R"(1e308)",
        R"("")",
        R"("none")",
        R"("x")",
        R"("human:ana")",
        R"("system")",
        R"("agent:")",
        R"("research")",
        R"("approval")",
        R"("COMPLETE")",
        R"("rejected")",
        R"("blocking")",
        R"("choice")",
        R"("bug")",
        R"("work")",
        R"("2026-11-21T10:04:05.123Z")",
        R"("2026-02-30T10:04:05Z")",
        R"("note")",
        R"("run-started")",
        R"([])",
        R"(["a","b"])",
        R"([1])",
        R"([{"id":"a"}])",
        R"([{"id":"a","id":"b"}])",
        R"({})",
        R"({"id":"a"})",
        R"({"gate":"none"})",
        R"({"gate":"none","max_iterations":1,"max_attempts":1,"max_cost_usd":0,"review_agent":true})",
        R"([[[[]]]])",
        R"({"a":{"b":[null,{"c":1}]}})",
    };
    return boost::json::parse(texts[random() % texts.size()]);
}

/// One random structural change somewhere in `object` (or an object nested in it).
void mutate(boost::json::object& object, std::mt19937& random) {
    if (object.empty() || random() % 8 == 0) {
        object["unknown_" + std::to_string(random() % 3)] = some_value(random);
        return;
    }
    auto member = object.begin() + static_cast<std::ptrdiff_t>(random() % object.size());
    switch (random() % 5) {
        case 0:
            object.erase(member);
            return;
        case 1:
            member->value() = some_value(random);
            return;
        case 2: {
            // Move the member to the end: keys out of the codec's order.
            const std::string key = member->key();
            boost::json::value value = member->value();
            object.erase(member);
            object[key] = std::move(value);
            return;
        }
        default:
            if (auto* nested = member->value().if_object()) {
                mutate(*nested, random);
            } else if (auto* array = member->value().if_array(); array && !array->empty()) {
                auto& element = (*array)[random() % array->size()];
                if (auto* item = element.if_object())
                    mutate(*item, random);
                else
                    element = some_value(random);
            } else {
                member->value() = some_value(random);
            }
    }
}

}  // namespace

TEST_CASE("codec: the direct path accepts every line the encoder writes") {
    DirectEventDecoder direct;
    for (const Event& event : all_samples()) {
        const std::string line = encode_event(event);
        CAPTURE(line);
        Event decoded;
        REQUIRE(direct.decode(line, decoded));
        CHECK(decoded == event);
        Event with_newline;
        CHECK(direct.decode(line + " \n", with_newline));
        CHECK(with_newline == event);
    }
}

TEST_CASE("codec: the direct path agrees with the document path on hand-made lines") {
    DirectEventDecoder direct;
    const std::string v = R"("v":1,"seq":7,"id":"e7","at":"2026-11-21T10:04:05.123Z",)";
    const std::vector<std::string> lines = {
        // Accepted by both.
        "{" + v + R"("by":"human:ana","type":"note","text":"a","extra":{"x":[1,{"y":null}]}})",
        "{" + v + R"("by":"human:ana","type":"note","zzz":null,"text":"a"})",
        "{" + v + R"("by":"human:ana","type":"note","text":"\u00e9\n\"q\" \ud83d\ude00"})",
        "{" + v + R"("by":"human:ana","type":"note","text":")" + std::string(5000, 'x') + R"(\n"})",
        "{" + v + R"("by":"system","type":"run-finished","run":"r","exit":-1,"cost_usd":0})",
        "{" + v + R"("by":"system","type":"run-finished","run":"r","exit":0,"cost_usd":1e-400})",
        "{" + v + R"("by":"system","type":"run-finished","run":"r","exit":0,"cost_usd":0.1})",
        "{" + v + R"("by":"system","type":"updated","requires":"none","awaiting":"work"})",
        "{" + v + R"("by":"system","type":"updated","labels":[],"blocked_by":["A-1"]})",
        "{" + v +
            R"("by":"agent:research","type":"question-asked","question":"q","text":"t",)"
            R"("kind":"blocking","response_type":"choice","options":[{"id":"a","x":{}}]})",
        R"({"type":"started","by":"system","at":"2026-11-21T10:04:05Z","id":"e","seq":1,"v":1})",
        // Refused by the document path: the direct path must refuse them too.
        "{" + v + R"("by":"human:ana","type":"note","text":"a","text":"b"})",
        "{" + v + R"("by":"human:ana","type":"note","text":"a","v":1})",
        "{" + v + R"("by":"human:ana","type":"note","type":"note","text":"a"})",
        "{" + v + R"("by":"human:ana","type":"note","text":null})",
        "{" + v + R"("by":"human:ana","type":"note"})",
        "{" + v + R"("by":"human","type":"note","text":"a"})",
        "{" + v + R"("by":"human:ana","type":"notes","text":"a"})",
        "{" + v + R"("by":"human:ana","type":7,"text":"a"})",
        "{" + v + R"("by":"human:ana","type":"note","text":"a"} )" + "x",
        "{" + v + R"("by":"human:ana","type":"note","text":"a")",
        "{" + v + R"("by":"system","type":"run-finished","run":"r","exit":0,"cost_usd":1e400})",
        "{" + v +
            R"("by":"system","type":"run-finished","run":"r","exit":2147483648,)"
            R"("cost_usd":0})",
        "{" + v + R"("by":"system","type":"run-finished","run":"r","exit":1.0,"cost_usd":0})",
        "{" + v + R"("by":"system","type":"updated","requires":null})",
        "{" + v + R"("by":"system","type":"updated","labels":["a",1]})",
        "{" + v + R"("by":"system","type":"updated","labels":"a"})",
        "{" + v +
            R"("by":"system","type":"run-started","run":"r","phase":"research",)"
            R"("attempt":1,"iteration":1,"policy":{"gate":"none"}})",
        "{" + v +
            R"("by":"system","type":"run-started","run":"r","phase":"research",)"
            R"("attempt":1,"iteration":1,"policy":[]})",
        replaced("{" + v + R"("by":"system","type":"started"})", R"("v":1)", R"("v":2)"),
        replaced("{" + v + R"("by":"system","type":"started"})", R"("v":1)", R"("v":0)"),
        replaced("{" + v + R"("by":"system","type":"started"})", R"("seq":7)", R"("seq":-0.0)"),
        R"({"v":1,"seq":1,"id":"e","at":"2026-11-21T10:04:05Z","by":"system","text":"x",)"
        R"("type":"note"})",
        R"([])",
        R"("note")",
        "",
    };
    std::size_t accepted = 0;
    for (const auto& line : lines) {
        const bool ok = direct_agrees(direct, line);
        if (ok) ++accepted;
        // Whichever path decoded it, the public decoder's answer is the document path's.
        const auto expected = decode_event_document(line);
        const auto actual = decode_event(line);
        REQUIRE(actual.has_value() == expected.has_value());
        if (actual)
            CHECK(actual.value() == expected.value());
        else
            CHECK(actual.error() == expected.error());
    }
    CHECK(accepted == 11);
}

TEST_CASE("codec: the direct path agrees with the document path on mutated lines") {
    std::mt19937 random{20261123};
    DirectEventDecoder direct;
    EventDecoder decoder;
    const auto samples = all_samples();
    std::size_t accepted = 0;
    for (int round = 0; round < 20'000; ++round) {
        const Event& event = samples[random() % samples.size()];
        std::string line;
        if (round % 2 == 0) {
            // A structural change: fields dropped, retyped, reordered, added, nested.
            boost::json::value document = boost::json::parse(encode_event(event));
            for (int changes = 1 + static_cast<int>(random() % 3); changes > 0; --changes)
                mutate(document.as_object(), random);
            line = boost::json::serialize(document);
        } else {
            // Damaged bytes.
            line = encode_event(event);
            for (int flips = 1 + static_cast<int>(random() % 3); flips > 0; --flips)
                line[random() % line.size()] = static_cast<char>(random() % 256);
        }
        if (direct_agrees(direct, line)) ++accepted;
        const auto expected = decode_event_document(line);
        const auto actual = decoder.decode(line);
        REQUIRE(actual.has_value() == expected.has_value());
        if (!actual) REQUIRE(actual.error() == expected.error());
    }
    CHECK(accepted > 1000);  // the mutations exercise the direct path, not only its refusals
}

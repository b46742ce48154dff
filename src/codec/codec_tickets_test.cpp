// Tests the ticket codec (wire form, defaults, decode errors) and the UTC timestamps.

#include "codec/codec_test_support.hpp"

#include <board/codec.hpp>

#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace {

using namespace board;
using namespace board::codec_test;
using Catch::Matchers::Contains;

}  // namespace

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
                                                 "branch",
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

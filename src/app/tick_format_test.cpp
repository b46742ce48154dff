// The tk tick parser of `board import-ticks`: fields, tk's enums, note lines and their
// origin, times, and one clear message (file, then line or field) for every malformed file.

#include "app/tick_format.hpp"

#include <board/codec.hpp>

#include <catch2/catch.hpp>

using namespace board;
using app::parse_tick;

namespace {

const std::string minimal = R"({
  "id": "a1b",
  "title": "Retry uploads",
  "status": "open",
  "priority": 1,
  "type": "feature",
  "owner": "ana@example.com",
  "created_by": "ana@example.com",
  "created_at": "2026-01-15T10:30:00.123456789Z",
  "updated_at": "2026-01-15T10:30:00Z"
})";

std::string error_of(std::string_view text) {
    auto parsed = parse_tick(text, "issues/a1b.json");
    REQUIRE(std::holds_alternative<std::string>(parsed));
    return std::get<std::string>(parsed);
}

app::Tick tick_of(std::string_view text) {
    auto parsed = parse_tick(text, "issues/a1b.json");
    if (auto* error = std::get_if<std::string>(&parsed)) FAIL(*error);
    return std::get<app::Tick>(parsed);
}

/// `minimal` with `"key": value` added before its closing brace.
std::string with(const std::string& key_value) {
    return minimal.substr(0, minimal.rfind('}')) + ", " + key_value + "}";
}

}  // namespace

TEST_CASE("a minimal tick reads its required fields, owner and friends are not reported",
          "[app][import]") {
    const auto t = tick_of(minimal);
    CHECK(t.id == "a1b");
    CHECK(t.title == "Retry uploads");
    CHECK(t.status == "open");
    CHECK(t.priority == 1);
    CHECK(t.type == TicketType::feature);
    CHECK(t.created_at == *parse_timestamp("2026-01-15T10:30:00.123Z"));
    CHECK_FALSE(t.started_at);
    CHECK(t.unmapped.empty());
}

TEST_CASE("workflow fields: requires, awaiting, legacy manual, verdict, links", "[app][import]") {
    const auto t = tick_of(with(R"("requires": "review", "awaiting": "input", "manual": true,
        "verdict": "rejected", "labels": ["backend", "ui"], "blocked_by": ["c3d"],
        "parent": "e5f", "closed_reason": "dup", "acceptance_criteria": "it retries")"));
    CHECK(t.requires_ == Awaiting::review);
    CHECK(t.awaiting == Awaiting::input);
    CHECK(t.manual);
    CHECK(t.verdict == "rejected");
    CHECK(t.labels == std::vector<std::string>{"backend", "ui"});
    CHECK(t.blocked_by == std::vector<std::string>{"c3d"});
    CHECK(t.parent == "e5f");
    CHECK(t.closed_reason == "dup");
    CHECK(t.acceptance_criteria == "it retries");
    // null is absent, as Go writes omitempty pointers
    const auto nulls = tick_of(with(R"("awaiting": null, "requires": null, "verdict": null)"));
    CHECK_FALSE(nulls.awaiting);
    CHECK_FALSE(nulls.requires_);
    CHECK(nulls.verdict.empty());
}

TEST_CASE("fields the board cannot keep, and unknown ones, are reported with their value",
          "[app][import]") {
    const auto t = tick_of(with(R"("after": ["x1y"], "external_ref": "GH-12",
        "target_date": "", "run": {"id": 3}, "defer_until": null)"));
    REQUIRE(t.unmapped.size() == 3);  // empty target_date and null defer_until say nothing
    CHECK(t.unmapped[0] ==
          app::UnmappedField{
              "a1b", "after", R"(["x1y"])", "the board has no soft order, only blocked_by"});
    CHECK(t.unmapped[1].field == "external_ref");
    CHECK(t.unmapped[1].value == R"("GH-12")");
    CHECK(t.unmapped[2].field == "run");
    CHECK(t.unmapped[2].value == R"({"id":3})");
    CHECK_THAT(t.unmapped[2].why, Catch::Contains("not a field of tk's tick schema"));
}

TEST_CASE("a malformed tick file gets one message naming the file and the line or field",
          "[app][import]") {
    CHECK(error_of("{\n  \"id\": \"a1b\",\n  \"title\": oops\n}").rfind("issues/a1b.json:3:", 0) ==
          0);
    CHECK_THAT(error_of("[1, 2]"), Catch::Contains("expected a JSON object"));
    CHECK(error_of(R"({"id": "a1b"})") ==
          R"(issues/a1b.json: field "title": missing (tk requires it))");
    CHECK(error_of(R"({"id":"a1b","title":"t","status":"doing","priority":1,"type":"task",
                      "created_at":"2026-01-15T10:30:00Z"})") ==
          R"(issues/a1b.json: field "status": "doing" is not one of open, in_progress, closed)");
    const std::string base =
        R"({"id":"a1b","title":"t","status":"open","type":"task","created_at":"2026-01-15T10:30:00Z",)";
    CHECK(error_of(base + R"("priority": 7})") ==
          R"(issues/a1b.json: field "priority": 7 is not an integer from 0 to 4)");
    CHECK(error_of(base + R"("priority": "high"})") ==
          R"(issues/a1b.json: field "priority": "high" is not an integer from 0 to 4)");
    CHECK(error_of(base + R"("priority": 1, "labels": "a,b"})") ==
          R"(issues/a1b.json: field "labels": expected an array of strings, found "a,b")");
    CHECK(error_of(base + R"("priority": 1, "awaiting": "someone"})")
              .find(R"(field "awaiting": "someone" is not one of work, approval)") !=
          std::string::npos);
    CHECK(error_of(base + R"("priority": 1, "requires": "input"})")
              .find(R"(field "requires": "input" is not one of approval, review, content)") !=
          std::string::npos);
    CHECK(error_of(base + R"("priority": 1, "manual": "yes"})") ==
          R"(issues/a1b.json: field "manual": expected true or false, found "yes")");
    CHECK(error_of(base + R"("priority": 1, "started_at": "yesterday"})") ==
          R"(issues/a1b.json: field "started_at": "yesterday" is not an RFC 3339 time)");
    CHECK(error_of(R"({"id":"a1b","title":"  ","status":"open","priority":1,"type":"task",
                      "created_at":"2026-01-15T10:30:00Z"})") ==
          R"(issues/a1b.json: field "title": is empty)");
}

TEST_CASE("notes: stamped lines start a note, [human] marks its origin, others continue it",
          "[app][import]") {
    const auto notes = app::parse_tick_notes(
        "2026-01-15 10:30 - Tried the retry helper\n"
        "2026-01-15 11:05 - [human] Use exponential backoff\n"
        "and cap it at 30 s\n"
        "\n"
        "2026-01-16 09:00 - PR ready: https://example.com/pr/4\n");
    REQUIRE(notes.size() == 3);
    CHECK(notes[0] ==
          app::TickNote{false, "Tried the retry helper", *parse_timestamp("2026-01-15T10:30:00Z")});
    CHECK(notes[1].human);
    CHECK(notes[1].text == "Use exponential backoff\nand cap it at 30 s");
    CHECK_FALSE(notes[2].human);
    CHECK(notes[2].wall == *parse_timestamp("2026-01-16T09:00:00Z"));

    // Text before any stamp (an edited notes field) is a note of its own, not lost.
    const auto edited = app::parse_tick_notes("free text\r\n2026-13-01 10:00 - not a date\n");
    REQUIRE(edited.size() == 1);
    CHECK(edited[0].text == "free text\n2026-13-01 10:00 - not a date");
    CHECK_FALSE(edited[0].wall);
    CHECK(app::parse_tick_notes("").empty());
}

TEST_CASE("RFC 3339 times as Go writes them", "[app][import]") {
    CHECK(app::parse_rfc3339("2026-01-15T10:30:00Z") == parse_timestamp("2026-01-15T10:30:00Z"));
    CHECK(app::parse_rfc3339("2026-01-15T10:30:00.5Z") ==
          parse_timestamp("2026-01-15T10:30:00.500Z"));
    CHECK(app::parse_rfc3339("2026-01-15T12:30:00+02:00") ==
          parse_timestamp("2026-01-15T10:30:00Z"));
    CHECK(app::parse_rfc3339("2026-01-15T05:00:00.123456-05:30") ==
          parse_timestamp("2026-01-15T10:30:00.123Z"));
    CHECK_FALSE(app::parse_rfc3339("2026-01-15 10:30:00Z"));
    CHECK_FALSE(app::parse_rfc3339("2026-01-15T10:30:00"));
    CHECK_FALSE(app::parse_rfc3339("2026-01-15T10:30:00+0200"));
    CHECK_FALSE(app::parse_rfc3339(""));
}

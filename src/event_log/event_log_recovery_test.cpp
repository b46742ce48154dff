// Tests opening a log: the fixture logs' outcomes, huge lines, and recovery from a cut at any byte.

#include "event_log/event_log_test_support.hpp"

#include <board/codec.hpp>
#include <board/event_log.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <sys/resource.h>
#include <vector>

namespace fs = std::filesystem;
using namespace board;
using namespace board::event_log_test;

namespace {

fs::path fixture(const std::string& name) {
    const char* root = std::getenv("BOARD_SOURCE_DIR");
    return fs::path{root ? root : "."} / "tests" / "fixtures" / "logs" / name;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Fixtures

TEST_CASE("event log: each fixture log opens with its documented outcome", "[event_log]") {
    struct Row {
        const char* file;
        std::optional<LogError::Kind> error;  ///< nullopt: opens
        std::int64_t events;                  ///< when it opens
        bool torn;
        const char* message;  ///< a substring of the error or of the first warning
    };

    using K = LogError::Kind;
    const Row row = GENERATE(values<Row>({
        {"valid.jsonl", std::nullopt, 4, false, ""},
        {"empty.jsonl", std::nullopt, 0, false, "the log is empty"},
        {"torn_tail.jsonl", std::nullopt, 3, true, "events.jsonl:4: recovered a torn tail"},
        {"torn_tail_garbage.jsonl", std::nullopt, 2, true, "events.jsonl:3: recovered a torn tail"},
        {"corrupt_middle.jsonl", K::corrupt, 0, false, "events.jsonl:2: invalid JSON"},
        {"seq_gap.jsonl", K::corrupt, 0, false, "events.jsonl:3: seq 4 follows seq 2 (a gap"},
        {"duplicate_seq.jsonl", K::corrupt, 0, false, "events.jsonl:3: seq 2 follows seq 2"},
        {"unknown_type.jsonl", K::corrupt, 0, false, "events.jsonl:2: field \"type\": unknown"},
        {"newer_version.jsonl",
         K::newer_version,
         0,
         false,
         "events.jsonl:2: field \"v\": schema version 2 is newer than this build reads (1)"},
        {"invalid_utf8.jsonl", K::corrupt, 0, false, "events.jsonl:2: invalid UTF-8"},
        {"rejected_event.jsonl", K::corrupt, 0, false, "events.jsonl:1: event seq 1 (note) is "},
    }));
    CAPTURE(row.file);
    TempDir tmp;
    const fs::path dir = tmp.path() / "PROJ-1";
    fs::create_directories(dir);
    const std::string original = read_file(fixture(row.file));
    REQUIRE((!original.empty() || std::string_view{row.file} == "empty.jsonl"));
    write_file(dir / "events.jsonl", original);

    const auto loaded = load_ticket(dir);
    if (row.error) {
        REQUIRE(std::holds_alternative<LogError>(loaded));
        const LogError& e = std::get<LogError>(loaded);
        CHECK(e.kind == *row.error);
        CHECK_THAT(e.message, Catch::Contains(row.message));
        CHECK_THAT(e.message, Catch::Contains((dir / "events.jsonl").string()));
        // A refusal never touches the file.
        CHECK(read_file(dir / "events.jsonl") == original);
        CHECK_FALSE(fs::exists(dir / "events.jsonl.torn"));
        // The streaming reader says the same, except on what only a fold can see.
        const auto read = read_log(dir / "events.jsonl", [](const Event&) {});
        if (std::string_view{row.file} == "rejected_event.jsonl") {
            CHECK(std::holds_alternative<ReadReport>(read));
        } else {
            REQUIRE(std::holds_alternative<LogError>(read));
            CHECK(std::get<LogError>(read).message == e.message);
        }
        return;
    }
    const Loaded& ok = must_be<Loaded>(loaded);
    CHECK(ok.report.events == row.events);
    CHECK(ok.report.last_seq == row.events);
    CHECK(ok.report.empty == (row.events == 0));
    CHECK(ok.ticket.seq == row.events);
    if (*row.message) {
        REQUIRE_FALSE(ok.report.warnings.empty());
        CHECK_THAT(ok.report.warnings.front(), Catch::Contains(row.message));
    } else {
        CHECK(ok.report.warnings.empty());
    }
    const std::string after = read_file(dir / "events.jsonl");
    if (row.torn) {
        CHECK(ok.report.torn_bytes > 0);
        CHECK(after.size() + ok.report.torn_bytes == original.size());
        CHECK(original.substr(0, after.size()) == after);
        std::string moved = original.substr(after.size());
        if (moved.back() != '\n') moved += '\n';
        CHECK(read_file(dir / "events.jsonl.torn") == moved);
        // Recovered once: the next open is clean.
        const Loaded& again = must_be<Loaded>(load_ticket(dir));
        CHECK(again.report.warnings.empty());
        CHECK(again.report.events == row.events);
    } else {
        CHECK(after == original);
        CHECK(ok.report.torn_bytes == 0);
    }
}

TEST_CASE("event log: a missing log is not_found, an empty one is a ticket with no events",
          "[event_log]") {
    TempDir tmp;
    const auto missing = load_ticket(tmp.path() / "PROJ-9");
    REQUIRE(std::holds_alternative<LogError>(missing));
    CHECK(std::get<LogError>(missing).kind == LogError::Kind::not_found);
    CHECK_THAT(std::get<LogError>(missing).message, Catch::Contains("PROJ-9"));

    const auto no_folder = transact(tmp.path() / "PROJ-9", ana(), [](const Ticket&) {
        return std::vector<Payload>{created_payload()};
    });
    REQUIRE(std::holds_alternative<LogError>(no_folder));
    CHECK(std::get<LogError>(no_folder).kind == LogError::Kind::not_found);
}

TEST_CASE(
    "event log: a log or ticket folder that is a symbolic link is refused, and nothing it "
    "names is touched",
    "[event_log]") {
    // A board cloned from someone else's repository may hold links; a file elsewhere whose
    // one line is no event would look like a torn tail, and its repair would empty it.
    TempDir tmp;
    const fs::path victim = tmp.path() / "outside" / "HEAD";
    fs::create_directories(victim.parent_path());
    write_file(victim, "ref: refs/heads/main\n");
    fs::create_directories(tmp.path() / "PROJ-1");
    fs::create_symlink(victim, tmp.path() / "PROJ-1" / "events.jsonl");
    fs::create_symlink(tmp.path() / "outside", tmp.path() / "PROJ-2");
    write_file(tmp.path() / "outside" / "events.jsonl", "not an event");
    for (const char* id : {"PROJ-1", "PROJ-2"}) {
        CAPTURE(id);
        const fs::path dir = tmp.path() / id;
        const auto loaded = load_ticket(dir);
        REQUIRE(std::holds_alternative<LogError>(loaded));
        CHECK_THAT(std::get<LogError>(loaded).message, Catch::Contains("symbolic link"));
        int visited = 0;
        const auto read = read_log(dir / "events.jsonl", [&](const Event&) { ++visited; });
        REQUIRE(std::holds_alternative<LogError>(read));
        CHECK_THAT(std::get<LogError>(read).message, Catch::Contains("symbolic link"));
        const auto appended = transact(dir, ana(), [](const Ticket&) {
            return std::vector<Payload>{NoteAdded{"through the link"}};
        });
        REQUIRE(std::holds_alternative<LogError>(appended));
        CHECK_THAT(std::get<LogError>(appended).message, Catch::Contains("symbolic link"));
    }
    CHECK(read_file(victim) == "ref: refs/heads/main\n");
    CHECK(read_file(tmp.path() / "outside" / "events.jsonl") == "not an event");
    CHECK_FALSE(fs::exists(tmp.path() / "outside" / "events.jsonl.torn"));
    CHECK_FALSE(fs::exists(victim.string() + ".torn"));
}

TEST_CASE("event log: a board reached through a link above its ticket folders reads and appends",
          "[event_log]") {
    // A link above the board (a home folder or a temp folder that is one) is the person's own
    // layout: only the ticket's folder and its log must not be links.
    TempDir tmp;
    fs::create_directories(tmp.path() / "real");
    fs::create_directory_symlink(tmp.path() / "real", tmp.path() / "board");
    const fs::path dir = tmp.path() / "board" / "PROJ-1";
    make_ticket(dir, 0);
    const auto appended = transact(dir, ana(), [](const Ticket&) {
        return std::vector<Payload>{NoteAdded{"through the board's link"}};
    });
    REQUIRE(std::holds_alternative<Committed>(appended));
    const auto loaded = load_ticket(dir);
    REQUIRE(std::holds_alternative<Loaded>(loaded));
    CHECK(std::get<Loaded>(loaded).ticket.notes.size() == 1);
    int visited = 0;
    const auto read = read_log(dir / "events.jsonl", [&](const Event&) { ++visited; });
    REQUIRE(std::holds_alternative<ReadReport>(read));
    CHECK(visited == 2);
    CHECK(fs::file_size(tmp.path() / "real" / "PROJ-1" / "events.jsonl") > 0);
}

TEST_CASE("event log: a 5 MB line reads back, and a torn 5 MB tail is moved aside whole",
          "[event_log]") {
    TempDir tmp;
    const fs::path dir = tmp.path() / "PROJ-1";
    make_ticket(dir, 1);
    const std::string big(5 * 1024 * 1024, 'x');
    const std::string line_end = read_file(dir / "events.jsonl");

    SECTION("complete") {
        must_be<Committed>(append_events(dir, {note_event("big", big)}, 2));
        const Loaded& loaded = must_be<Loaded>(load_ticket(dir));
        CHECK(loaded.report.events == 3);
        REQUIRE(loaded.ticket.notes.size() == 2);
        CHECK(loaded.ticket.notes.back().text == big);
    }
    SECTION("torn") {
        const std::string torn = encode_event(Event{1, 3, "big", t0, ana(), NoteAdded{big}});
        write_file(dir / "events.jsonl", line_end + torn.substr(0, torn.size() - 1));
        const Loaded& loaded = must_be<Loaded>(load_ticket(dir));
        CHECK(loaded.report.events == 2);
        CHECK(loaded.report.torn_bytes == torn.size() - 1);
        CHECK(read_file(dir / "events.jsonl") == line_end);
    }
}

TEST_CASE("event log: a line over the limit is refused with file:line, in bounded memory",
          "[event_log]") {
    TempDir tmp;
    const fs::path dir = tmp.path() / "PROJ-1";
    make_ticket(dir, 1);
    const std::string before = read_file(dir / "events.jsonl");
    // 160 MB of one line (made by hand: no board tool writes one), then a good line after it.
    const std::size_t huge = 160u << 20;
    {
        std::ofstream out{dir / "events.jsonl", std::ios::binary | std::ios::app};
        const std::string prefix = R"({"v":1,"seq":3,"id":"huge","at":"2026-11-20T10:00:00Z",)"
                                   R"("by":{"kind":"human","name":"ana"},"type":"note-added",)"
                                   R"("text":")";
        out << prefix;
        const std::string block(1u << 20, 'x');
        for (std::size_t i = 0; i < huge / block.size(); ++i) out << block;
        out << "\"}\n" << encode_event(note_event("after", "after the huge line")) << "\n";
    }
    rusage usage{};
    ::getrusage(RUSAGE_SELF, &usage);
    const long peak_before_kb = usage.ru_maxrss;

    const auto loaded = load_ticket(dir);
    REQUIRE(std::holds_alternative<LogError>(loaded));
    const LogError& error = std::get<LogError>(loaded);
    CHECK(error.kind == LogError::Kind::corrupt);
    CHECK_THAT(error.message, Catch::Matchers::Contains("events.jsonl:3:"));
    CHECK_THAT(error.message, Catch::Matchers::Contains("longer than the 8388608 bytes"));
    std::int64_t visited = 0;
    const auto streamed = read_log(dir / "events.jsonl", [&](const Event&) { ++visited; });
    REQUIRE(std::holds_alternative<LogError>(streamed));
    CHECK(visited == 2);  // the two lines before it, and nothing is skipped past it

    ::getrusage(RUSAGE_SELF, &usage);
    const long grown_mb = (usage.ru_maxrss - peak_before_kb) / 1024;
    INFO("peak memory grew by " << grown_mb << " MB reading a " << (huge >> 20) << " MB line");
    CHECK(grown_mb < 100);  // far below the line: at most its 8 MB was held (ASan adds its own)
    // Refused, not repaired: the file is as it was.
    CHECK(fs::file_size(dir / "events.jsonl") > before.size() + huge);
}

TEST_CASE("event log: an event that would make a line over the limit is not written",
          "[event_log]") {
    TempDir tmp;
    const fs::path dir = tmp.path() / "PROJ-1";
    make_ticket(dir, 1);
    const std::string before = read_file(dir / "events.jsonl");
    const std::string too_big(max_event_line_bytes, 'x');
    const auto result = append_events(dir, {note_event("big", too_big)}, 2);
    REQUIRE(std::holds_alternative<LogError>(result));
    CHECK(std::get<LogError>(result).kind == LogError::Kind::invalid_batch);
    CHECK_THAT(
        std::get<LogError>(result).message,
        Catch::Matchers::Contains("(note)") && Catch::Matchers::Contains("a log line may hold"));
    CHECK(read_file(dir / "events.jsonl") == before);
    // The log is still good to append to.
    must_be<Committed>(append_events(dir, {note_event("small", "a small note")}, 2));
    CHECK(must_be<Loaded>(load_ticket(dir)).report.events == 3);
}

// ---------------------------------------------------------------------------------------------
// Cut at every byte (ninja's Truncate test)

TEST_CASE("event log: a log cut at any byte opens, recovering the torn tail, losing no event",
          "[event_log]") {
    // Built once: the bytes of a valid 6-event log and where each line ends.
    static const std::string full = [] {
        TempDir tmp;
        make_ticket(tmp.path() / "T", 5);
        return read_file(tmp.path() / "T" / "events.jsonl");
    }();
    static const std::vector<std::size_t> line_ends = [] {
        std::vector<std::size_t> ends;
        for (std::size_t i = 0; i < full.size(); ++i)
            if (full[i] == '\n') ends.push_back(i + 1);
        return ends;
    }();
    REQUIRE(line_ends.size() == 6);

    const auto cut = GENERATE(range(std::size_t{0}, full.size() + 1));
    CAPTURE(cut);
    TempDir tmp{fast_root()};
    const fs::path dir = tmp.path() / "PROJ-1";
    fs::create_directories(dir);
    write_file(dir / "events.jsonl", std::string_view{full}.substr(0, cut));

    const auto complete = static_cast<std::int64_t>(
        std::upper_bound(line_ends.begin(), line_ends.end(), cut) - line_ends.begin());
    const std::size_t good = complete == 0 ? 0 : line_ends[static_cast<std::size_t>(complete - 1)];

    EventLog log{dir, fixed_options()};
    const Loaded& loaded = must_be<Loaded>(log.load());
    CHECK(loaded.report.events == complete);
    CHECK(loaded.report.last_seq == complete);
    CHECK(loaded.report.torn_bytes == cut - good);
    CHECK(read_file(dir / "events.jsonl") == full.substr(0, good));
    if (cut != good) {
        CHECK(read_file(dir / "events.jsonl.torn") == full.substr(good, cut - good) + "\n");
    } else {
        CHECK_FALSE(fs::exists(dir / "events.jsonl.torn"));
    }
    // Writing goes on from the recovered log.
    const auto next = log.transact(ana(), [](const Ticket& t) {
        return std::vector<Payload>{t.id.empty() ? Payload{created_payload()}
                                                 : Payload{NoteAdded{"after the cut"}}};
    });
    CHECK(must_be<Committed>(next).ticket->seq == complete + 1);
}

// Tests appending: transact, optimistic concurrency, lock timeouts, close-on-exec, random ids.

#include "event_log/event_log_test_support.hpp"

#include <board/codec.hpp>
#include <board/event_log.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <fcntl.h>
#include <filesystem>
#include <set>
#include <string>
#include <sys/file.h>
#include <unistd.h>
#include <vector>

namespace fs = std::filesystem;
using namespace board;
using namespace board::event_log_test;

// ---------------------------------------------------------------------------------------------
// Appends

TEST_CASE("event log: transact stamps the envelope and writes what reduce accepted",
          "[event_log]") {
    TempDir tmp;
    const fs::path dir = tmp.path() / "PROJ-1";
    fs::create_directories(dir);
    EventLog log{dir, fixed_options()};

    const Committed& first = must_be<Committed>(log.transact(ana(), [](const Ticket& t) {
        CHECK(t.id.empty());
        return std::vector<Payload>{created_payload(), NoteAdded{"hello"}};
    }));
    REQUIRE(first.events.size() == 2);
    CHECK(first.events[0].seq == 1);
    CHECK(first.events[1].seq == 2);
    CHECK(first.events[0].id == "id1");
    CHECK(first.events[1].at == t0);
    CHECK(first.ticket->seq == 2);
    CHECK(read_file(dir / "events.jsonl") ==
          encode_event(first.events[0]) + "\n" + encode_event(first.events[1]) + "\n");

    SECTION("a refusal writes nothing and names the refused event") {
        const std::string before = read_file(dir / "events.jsonl");
        const auto refused = log.transact(ana(), [](const Ticket&) {
            return std::vector<Payload>{NoteAdded{"fine"}, created_payload()};
        });
        REQUIRE(std::holds_alternative<Refused>(refused));
        CHECK(std::get<Refused>(refused).index == 1);
        CHECK(std::get<Refused>(refused).rejection.reason == RejectReason::already_created);
        CHECK(read_file(dir / "events.jsonl") == before);
        // The cache was not touched by the refused batch.
        const Committed& next = must_be<Committed>(log.transact(ana(), [](const Ticket& t) {
            CHECK(t.seq == 2);
            return std::vector<Payload>{NoteAdded{"after"}};
        }));
        CHECK(next.events.at(0).seq == 3);
        // The first result's ticket is a snapshot: later appends copy rather than change it.
        CHECK(first.ticket->seq == 2);
        CHECK(next.ticket->seq == 3);
    }
    SECTION("an empty batch is a no-op") {
        const Committed& none = must_be<Committed>(
            log.transact(ana(), [](const Ticket&) { return std::vector<Payload>{}; }));
        CHECK(none.events.empty());
        CHECK(none.ticket->seq == 2);
    }
    SECTION("another instance sees the appends of this one") {
        const Loaded& other = must_be<Loaded>(load_ticket(dir));
        CHECK(other.ticket == *first.ticket);
    }
}

TEST_CASE("event log: transact_existing appends events of several authors, and starts no log",
          "[event_log]") {
    TempDir tmp;
    const fs::path dir = tmp.path() / "PROJ-1";
    fs::create_directories(dir);
    const Actor agent{ActorKind::agent, "research"};
    const auto notes = [&](const Ticket&) {
        return std::vector<Authored>{{agent, NoteAdded{"found it"}}, {ana(), NoteAdded{"ok"}}};
    };

    const auto missing = transact_existing(dir, notes, fixed_options());
    REQUIRE(std::holds_alternative<LogError>(missing));
    CHECK(std::get<LogError>(missing).kind == LogError::Kind::not_found);
    CHECK_THAT(std::get<LogError>(missing).message, Catch::EndsWith("events.jsonl: no such log"));
    CHECK_FALSE(fs::exists(dir / "events.jsonl"));  // a folder being made is left as it is

    make_ticket(dir, 0);
    EventLog log{dir, fixed_options()};
    const Committed& written = must_be<Committed>(log.transact_existing([&](const Ticket& t) {
        CHECK(t.seq == 1);  // built from the log as it is under the lock
        return notes(t);
    }));
    REQUIRE(written.events.size() == 2);
    CHECK(written.events[0].by == agent);
    CHECK(written.events[1].by == ana());
    CHECK(written.events[1].seq == 3);
    CHECK(must_be<Loaded>(load_ticket(dir)).ticket == *written.ticket);
}

TEST_CASE("event log: optimistic concurrency gives a conflict, a retried append is a no-op",
          "[event_log]") {
    TempDir tmp;
    const fs::path dir = tmp.path() / "PROJ-1";
    make_ticket(dir, 0);
    EventLog cli{dir};
    EventLog daemon{dir};
    REQUIRE(must_be<Loaded>(cli.load()).report.last_seq == 1);
    REQUIRE(must_be<Loaded>(daemon.load()).report.last_seq == 1);

    const std::vector<Event> batch{note_event("cli-1", "from the cli"),
                                   note_event("cli-2", "and again")};
    const Committed& landed = must_be<Committed>(cli.append(batch, 1));
    CHECK_FALSE(landed.duplicate);
    CHECK(landed.ticket->seq == 3);

    const auto conflict = daemon.append({note_event("daemon-1", "from the daemon")}, 1);
    REQUIRE(std::holds_alternative<Conflict>(conflict));
    CHECK(std::get<Conflict>(conflict).expected_last_seq == 1);
    CHECK(std::get<Conflict>(conflict).actual_last_seq == 3);
    CHECK_THAT(std::get<Conflict>(conflict).message, Catch::Contains("events.jsonl"));

    // The CLI never saw its acknowledgement (say) and retries the very same batch.
    const Committed& retried = must_be<Committed>(cli.append(batch, 1));
    CHECK(retried.duplicate);
    CHECK(retried.events.empty());
    CHECK(retried.ticket->seq == 3);
    CHECK(must_be<Committed>(EventLog{dir}.append(batch, 1)).duplicate);  // a cold cache too

    // The daemon re-reads and retries.
    const Committed& again = must_be<Committed>(daemon.append({note_event("daemon-1", "x")}, 3));
    CHECK(again.events.at(0).seq == 4);

    SECTION("a batch with a missing or repeated id is refused before the lock") {
        const auto bad = daemon.append({note_event("", "no id")}, 4);
        REQUIRE(std::holds_alternative<LogError>(bad));
        CHECK(std::get<LogError>(bad).kind == LogError::Kind::invalid_batch);
        const auto twice = daemon.append({note_event("a", "1"), note_event("a", "2")}, 4);
        REQUIRE(std::holds_alternative<LogError>(twice));
        CHECK(std::get<LogError>(twice).kind == LogError::Kind::invalid_batch);
        const auto none = daemon.append({}, 4);
        REQUIRE(std::holds_alternative<LogError>(none));
    }
}

TEST_CASE("event log: a writer gives up with lock_timeout while another holds the lock",
          "[event_log]") {
    TempDir tmp;
    const fs::path dir = tmp.path() / "PROJ-1";
    make_ticket(dir, 0);
    const int holder = ::open((dir / "events.jsonl").c_str(), O_RDONLY | O_CLOEXEC);
    REQUIRE(holder >= 0);
    REQUIRE(::flock(holder, LOCK_EX) == 0);
    LogOptions options;
    options.lock_timeout = std::chrono::milliseconds{50};
    const auto start = std::chrono::steady_clock::now();
    const auto result = transact(
        dir,
        ana(),
        [](const Ticket&) { return std::vector<Payload>{NoteAdded{"blocked"}}; },
        options);
    const auto waited = std::chrono::steady_clock::now() - start;
    ::close(holder);
    REQUIRE(std::holds_alternative<LogError>(result));
    CHECK(std::get<LogError>(result).kind == LogError::Kind::lock_timeout);
    CHECK_THAT(std::get<LogError>(result).message, Catch::Contains("50 ms"));
    CHECK(waited >= std::chrono::milliseconds{50});
    // Once released, writing works.
    must_be<Committed>(transact(
        dir, ana(), [](const Ticket&) { return std::vector<Payload>{NoteAdded{"free"}}; }));
}

TEST_CASE("event log: a torn tail seen without the lock is not cut while a writer holds it",
          "[event_log]") {
    TempDir tmp;
    const fs::path dir = tmp.path() / "PROJ-1";
    make_ticket(dir, 1);
    const std::string complete = read_file(dir / "events.jsonl");
    const std::string line =
        encode_event(Event{1, 3, "in-flight", t0, ana(), NoteAdded{"being written"}}) + "\n";
    // A writer (this test) holds the lock and is half-way through its line.
    const int writer = ::open((dir / "events.jsonl").c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    REQUIRE(writer >= 0);
    REQUIRE(::flock(writer, LOCK_EX) == 0);
    const std::string half = line.substr(0, line.size() / 2);
    REQUIRE(::write(writer, half.data(), half.size()) == static_cast<ssize_t>(half.size()));

    LogOptions options;
    options.lock_timeout = std::chrono::milliseconds{30};
    const auto blocked = load_ticket(dir, options);
    REQUIRE(std::holds_alternative<LogError>(blocked));
    CHECK(std::get<LogError>(blocked).kind == LogError::Kind::lock_timeout);
    CHECK(read_file(dir / "events.jsonl") == complete + half);  // nothing was cut

    // The writer finishes its line and lets go: the line is there, nothing is torn.
    const std::string rest = line.substr(half.size());
    REQUIRE(::write(writer, rest.data(), rest.size()) == static_cast<ssize_t>(rest.size()));
    ::close(writer);
    const Loaded loaded = must_be<Loaded>(load_ticket(dir));
    CHECK(loaded.report.events == 3);
    CHECK(loaded.report.torn_bytes == 0);
}

TEST_CASE("event log: the log's fd is close-on-exec while the lock is held", "[event_log]") {
    TempDir tmp;
    const fs::path dir = tmp.path() / "PROJ-1";
    make_ticket(dir, 0);
    const fs::path log_file = fs::canonical(dir / "events.jsonl");
    int seen = 0;
    must_be<Committed>(transact(dir, ana(), [&](const Ticket&) {
        for (const auto& entry : fs::directory_iterator{"/proc/self/fd"}) {
            std::error_code ec;
            if (fs::read_symlink(entry.path(), ec) != log_file) continue;
            const int fd = std::stoi(entry.path().filename().string());
            CHECK((::fcntl(fd, F_GETFD) & FD_CLOEXEC) != 0);
            ++seen;
        }
        return std::vector<Payload>{NoteAdded{"checked"}};
    }));
    CHECK(seen == 1);
}

TEST_CASE("event log: random ids are 32 hex digits and distinct", "[event_log]") {
    std::set<std::string> seen;
    for (int i = 0; i < 1000; ++i) {
        const std::string id = random_event_id();
        CHECK(id.size() == 32);
        CHECK(id.find_first_not_of("0123456789abcdef") == std::string::npos);
        seen.insert(id);
    }
    CHECK(seen.size() == 1000);
}

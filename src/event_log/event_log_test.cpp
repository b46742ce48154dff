#include "support/temp_dir.hpp"

#include <board/codec.hpp>
#include <board/event_log.hpp>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <signal.h>
#include <spawn.h>
#include <sstream>
#include <string>
#include <sys/file.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

extern char** environ;

namespace fs = std::filesystem;
using namespace board;

namespace {

constexpr UnixMillis t0 = 1'795'000'000'000;

/// A fresh folder under `root` (the system temp dir by default), removed at scope exit.
struct TempDir : testing::TempDir {
    explicit TempDir(const fs::path& root = fs::temp_directory_path())
        : testing::TempDir("board-event-log-", root) {}
};

std::string read_file(const fs::path& path) {
    std::ifstream in{path, std::ios::binary};
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
}

void write_file(const fs::path& path, std::string_view bytes) {
    std::ofstream out{path, std::ios::binary | std::ios::trunc};
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

/// Where the heavy tests write: tmpfs when there is one. They test the lock and the recovery,
/// not the disk; on a loaded VM a disk fdatasync takes ~4 ms, which would make 4000 serialised
/// appends (or 800 cut logs) take most of a minute. The benchmark measures the disk.
fs::path fast_root() {
    std::error_code ec;
    if (fs::is_directory("/dev/shm", ec)) return "/dev/shm";
    return fs::temp_directory_path();
}

fs::path fixture(const std::string& name) {
    const char* root = std::getenv("BOARD_SOURCE_DIR");
    return fs::path{root ? root : "."} / "tests" / "fixtures" / "logs" / name;
}

Actor ana() {
    return {ActorKind::human, "ana"};
}

Created created_payload() {
    Created c;
    c.ticket = "PROJ-1";
    c.title = "A ticket for the event log tests";
    return c;
}

/// Deterministic clock and ids, so tests can assert on what was written.
LogOptions fixed_options() {
    LogOptions options;
    options.clock = [] { return t0; };
    options.new_id = [n = 0]() mutable { return "id" + std::to_string(++n); };
    return options;
}

/// The expected alternative of a result, by value (results are usually temporaries).
template <class T, class V>
T must_be(V result) {
    if (const auto* e = std::get_if<LogError>(&result)) FAIL_CHECK(e->message);
    REQUIRE(std::holds_alternative<T>(result));
    return std::get<T>(std::move(result));
}

Event note_event(std::string id, std::string text, UnixMillis at = t0) {
    return Event{event_schema_version, 0, std::move(id), at, ana(), NoteAdded{std::move(text)}};
}

/// A ticket folder whose log holds `created` and `notes` notes, written through transact.
void make_ticket(const fs::path& dir, int notes) {
    fs::create_directories(dir);
    EventLog log{dir, fixed_options()};
    must_be<Committed>(log.transact(ana(), [&](const Ticket&) {
        std::vector<Payload> batch{created_payload()};
        for (int i = 0; i < notes; ++i) {
            // Multi-byte text, so that some cuts fall inside a UTF-8 character.
            batch.emplace_back(NoteAdded{fmt::format("note {} – grüße ✓", i + 1)});
        }
        return batch;
    }));
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

// ---------------------------------------------------------------------------------------------
// Real processes

namespace {

fs::path writer_binary() {
    // BOARD_BINARY_DIR as board_add_tests means to set it; the compiled-in path covers
    // board_add_tests passing only the first of its two ENVIRONMENT entries (see the report).
    const char* root = std::getenv("BOARD_BINARY_DIR");
#ifdef BOARD_LOG_WRITER
    const fs::path exe = root ? fs::path{root} / "tests" / "log_writer" / "board_log_writer"
                              : fs::path{BOARD_LOG_WRITER};
#else
    REQUIRE(root != nullptr);
    const fs::path exe = fs::path{root} / "tests" / "log_writer" / "board_log_writer";
#endif
    REQUIRE(fs::exists(exe));
    return exe;
}

/// Starts `board_log_writer dir count` with its standard output sent to `out`.
pid_t spawn_writer(const fs::path& dir, long count, const fs::path& out) {
    const std::string exe = writer_binary().string();
    const std::string dir_arg = dir.string();
    const std::string count_arg = std::to_string(count);
    posix_spawn_file_actions_t actions;
    REQUIRE(posix_spawn_file_actions_init(&actions) == 0);
    REQUIRE(posix_spawn_file_actions_addopen(
                &actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644) == 0);
    std::vector<char*> argv{const_cast<char*>(exe.c_str()),  // NOLINT: posix_spawn's signature
                            const_cast<char*>(dir_arg.c_str()),
                            const_cast<char*>(count_arg.c_str()),
                            nullptr};
    pid_t pid = -1;
    const int rc = posix_spawn(&pid, exe.c_str(), &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    REQUIRE(rc == 0);
    return pid;
}

int wait_for(pid_t pid) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) return -1;
    }
    return status;
}

std::vector<std::int64_t> acknowledged(const fs::path& out) {
    std::vector<std::int64_t> seqs;
    std::istringstream in{read_file(out)};
    std::string line;
    // A line without its newline was cut by the kill: the append was acknowledged but the
    // writer died while reporting it, so it is not counted (the log may well hold it).
    while (std::getline(in, line)) {
        if (in.eof()) break;
        seqs.push_back(std::stoll(line));
    }
    return seqs;
}

}  // namespace

TEST_CASE("event log: 8 processes appending 500 events each lose and duplicate nothing",
          "[event_log][processes]") {
    TempDir tmp{fast_root()};
    const fs::path dir = tmp.path() / "PROJ-1";
    make_ticket(dir, 0);
    constexpr int writers = 8;
    constexpr long each = 500;
    std::vector<pid_t> pids;
    for (int i = 0; i < writers; ++i) {
        pids.push_back(spawn_writer(dir, each, tmp.path() / fmt::format("out{}", i)));
    }
    for (const pid_t pid : pids) {
        const int status = wait_for(pid);
        CHECK(WIFEXITED(status));
        CHECK(WEXITSTATUS(status) == 0);
    }
    std::set<std::int64_t> acked;
    for (int i = 0; i < writers; ++i) {
        const auto seqs = acknowledged(tmp.path() / fmt::format("out{}", i));
        CHECK(seqs.size() == each);
        CHECK(std::is_sorted(seqs.begin(), seqs.end()));
        acked.insert(seqs.begin(), seqs.end());
    }
    CHECK(acked.size() == writers * each);

    std::set<std::string> ids;
    std::int64_t expected_seq = 0;
    std::int64_t notes = 0;
    const ReadReport& report =
        must_be<ReadReport>(read_log(dir / "events.jsonl", [&](const Event& e) {
            CHECK(e.seq == ++expected_seq);
            ids.insert(e.id);
            if (std::holds_alternative<NoteAdded>(e.payload)) ++notes;
        }));
    CHECK(report.events == 1 + writers * each);
    CHECK(report.warnings.empty());
    CHECK(notes == writers * each);
    CHECK(ids.size() == static_cast<std::size_t>(1 + writers * each));
    CHECK(*acked.begin() == 2);
    CHECK(*acked.rbegin() == 1 + writers * each);
}

/// Forks a writer that appends notes through transact() until it is killed, writing each
/// acknowledged seq to `out`. Forked rather than spawned: an exec of an ASan binary takes
/// ~30-300 ms on this VM, which would leave room for a few dozen kills, not 200.
/// Returns once the child has read the log and is about to append, so that the caller's
/// random delay lands among appends (a fork of an ASan process takes tens of ms).
/// The child starts from a copy of the parent's `log`, cache included, so it does not re-read
/// a log that grows with every iteration (under ASan that would dominate the test).
pid_t fork_writer(EventLog& log, const fs::path& out) {
    const int ack = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    REQUIRE(ack >= 0);
    int ready[2];
    REQUIRE(::pipe2(ready, O_CLOEXEC) == 0);
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        // The child: no Catch, no exceptions out, only _exit.
        ::close(ready[0]);
        if (!std::holds_alternative<Loaded>(log.load())) ::_exit(2);
        if (::write(ready[1], "r", 1) != 1) ::_exit(5);
        const Actor by{ActorKind::human, "killed"};
        const std::string me = fmt::format("from {}", ::getpid());
        for (long i = 0;; ++i) {
            const auto result = log.transact(by, [&](const Ticket&) {
                return std::vector<Payload>{NoteAdded{fmt::format("note {} {}", i, me)}};
            });
            const auto* committed = std::get_if<Committed>(&result);
            if (!committed) ::_exit(3);
            const std::string line = std::to_string(committed->events.back().seq) + "\n";
            if (::write(ack, line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
                ::_exit(4);
            }
        }
    }
    ::close(ack);
    ::close(ready[1]);
    char byte = 0;
    while (::read(ready[0], &byte, 1) < 0 && errno == EINTR) {
    }
    ::close(ready[0]);
    return pid;
}

TEST_CASE("event log: a writer killed with SIGKILL at any moment loses no acknowledged event",
          "[event_log][processes]") {
    TempDir tmp{fast_root()};
    const fs::path dir = tmp.path() / "PROJ-1";
    make_ticket(dir, 0);
    std::mt19937 random{20261123};
    constexpr int iterations = 200;
    std::int64_t last_seq = 1;
    std::int64_t recovered = 0;
    std::int64_t acked_total = 0;
    EventLog parent{dir};
    for (int i = 0; i < iterations; ++i) {
        CAPTURE(i);
        must_be<Loaded>(parent.load());  // brings the parent's cache (and the child's) up to date
        const fs::path out = tmp.path() / "acked";
        const pid_t pid = fork_writer(parent, out);
        std::this_thread::sleep_for(
            std::chrono::microseconds{std::uniform_int_distribution<int>{0, 8'000}(random)});
        ::kill(pid, SIGKILL);
        const int status = wait_for(pid);
        if (WIFEXITED(status)) FAIL("writer exited with " << WEXITSTATUS(status));

        // Opens the log as any reader would after the crash: recovers a torn tail if any.
        const Loaded loaded = must_be<Loaded>(parent.load());
        if (loaded.report.torn_bytes > 0) ++recovered;
        const auto acked = acknowledged(out);
        acked_total += static_cast<std::int64_t>(acked.size());
        const std::string writer = fmt::format("from {}", pid);
        for (const std::int64_t seq : acked) {
            REQUIRE(seq <= loaded.report.last_seq);
            REQUIRE(seq > last_seq);
            // Every event after `created` (seq 1) is a note, so seq s is note s - 2.
            CHECK_THAT(loaded.ticket.notes.at(static_cast<std::size_t>(seq - 2)).text,
                       Catch::EndsWith(writer));
        }
        REQUIRE(loaded.report.last_seq >= last_seq);
        last_seq = loaded.report.last_seq;
    }
    // A SIGKILL cannot split a write() to a regular file, so torn tails are rare here; the
    // cut-at-every-byte test covers them.
    INFO("torn tails recovered: " << recovered << ", acknowledged: " << acked_total
                                  << ", events: " << last_seq);
    CHECK(acked_total > iterations);
    CHECK(last_seq >= acked_total + 1);
    // And a cold, independent read of the whole log agrees.
    std::int64_t seq = 0;
    const ReadReport report = must_be<ReadReport>(
        read_log(dir / "events.jsonl", [&](const Event& e) { CHECK(e.seq == ++seq); }));
    CHECK(report.last_seq == last_seq);
    CHECK(report.warnings.empty());
    WARN("kill -9 loop: " << iterations << " kills, " << acked_total << " acknowledged, "
                          << last_seq - 1 << " appended, " << recovered << " torn tails");
}

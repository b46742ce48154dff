// Tests real processes on one log: 8 concurrent writers, and a writer killed at any moment.

#include "event_log/event_log_test_support.hpp"

#include <board/event_log.hpp>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <random>
#include <set>
#include <signal.h>
#include <spawn.h>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

extern char** environ;

namespace fs = std::filesystem;
using namespace board;
using namespace board::event_log_test;

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
    // A loaded machine gives the writer less of each wait: the loop goes on, up to ten times
    // as long, until the kills have cut through more acknowledged work than there were kills.
    constexpr int most_iterations = 10 * iterations;
    int kills = 0;
    std::int64_t last_seq = 1;
    std::int64_t recovered = 0;
    std::int64_t acked_total = 0;
    EventLog parent{dir};
    for (int i = 0; i < most_iterations && (i < iterations || acked_total <= iterations); ++i) {
        ++kills;
        CAPTURE(i);
        must_be<Loaded>(parent.load());  // brings the parent's cache (and the child's) up to date
        const fs::path out = tmp.path() / "acked";
        const pid_t pid = fork_writer(parent, out);
        // The scenario: a kill at a random moment of the writer's work, not a wait for it.
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
    WARN("kill -9 loop: " << kills << " kills, " << acked_total << " acknowledged, " << last_seq - 1
                          << " appended, " << recovered << " torn tails");
}

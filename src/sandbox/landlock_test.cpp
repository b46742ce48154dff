#include "support/unique_fd.hpp"

#include <board/sandbox.hpp>

#include <catch2/catch.hpp>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace fs = std::filesystem;

namespace {

struct Scratch {
    fs::path dir;

    Scratch() {
        dir = fs::temp_directory_path() / ("board-sandbox-" + std::to_string(::getpid()));
        fs::remove_all(dir);
        fs::create_directories(dir / "open");
        fs::create_directories(dir / "closed" / "secrets");
        std::ofstream(dir / "closed" / "log.jsonl") << "line\n";
        std::ofstream(dir / "closed" / "secrets" / "token") << "s3cret\n";
        std::ofstream(dir / "closed" / "secrets" / "other") << "readable\n";
    }

    ~Scratch() { fs::remove_all(dir); }
};

/// Runs `body` in a child confined by `rules`; the child's exit status is what body returns
/// (0 for success), or 100 when it could not be confined.
template <class Body>
int confined(const board::Confinement& rules, Body body) {
    const pid_t pid = ::fork();
    if (pid == 0) {
        if (!board::confine_self(rules).empty()) ::_exit(100);
        ::_exit(body());
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 200;
}

/// True, with a warning, when this kernel has no Landlock: the sandbox is off, nothing to test.
bool no_landlock() {
    if (board::landlock_abi() != 0) return false;
    WARN("this kernel has no Landlock: the sandbox is off here, nothing to test");
    return true;
}

/// 0 if `path` opens with `flags`, else 1 (EACCES) or 2 (anything else).
int try_open(const fs::path& path, int flags) {
    const int fd = ::open(path.c_str(), flags | O_CLOEXEC, 0644);
    if (fd >= 0) {
        ::close(fd);
        return 0;
    }
    return errno == EACCES ? 1 : 2;
}

}  // namespace

TEST_CASE("a confined process writes only where it may and cannot read a hidden file") {
    if (no_landlock()) return;
    Scratch s;
    board::Confinement rules;
    rules.writable = {s.dir / "open", s.dir / "does-not-exist"};
    rules.hidden = {s.dir / "closed" / "secrets" / "token"};

    CHECK(confined(rules,
                   [&] { return try_open(s.dir / "open" / "new.md", O_WRONLY | O_CREAT); }) == 0);
    // Appending to a log, creating beside it, truncating it: all refused.
    CHECK(confined(rules, [&] {
              return try_open(s.dir / "closed" / "log.jsonl", O_WRONLY | O_APPEND);
          }) == 1);
    CHECK(confined(rules, [&] { return try_open(s.dir / "closed" / "new", O_WRONLY | O_CREAT); }) ==
          1);
    CHECK(confined(rules, [&] {
              return ::truncate((s.dir / "closed" / "log.jsonl").c_str(), 0) == 0
                         ? 0
                         : (errno == EACCES ? 1 : 2);
          }) == 1);
    CHECK(fs::file_size(s.dir / "closed" / "log.jsonl") == 5);
    // Reading: the log and the hidden file's neighbour yes, the hidden file no.
    CHECK(confined(rules, [&] { return try_open(s.dir / "closed" / "log.jsonl", O_RDONLY); }) == 0);
    CHECK(confined(rules, [&] {
              return try_open(s.dir / "closed" / "secrets" / "other", O_RDONLY);
          }) == 0);
    CHECK(confined(rules, [&] {
              return try_open(s.dir / "closed" / "secrets" / "token", O_RDONLY);
          }) == 1);
    // Everything else on the machine still reads and runs.
    CHECK(confined(rules, [&] { return try_open("/etc/passwd", O_RDONLY); }) == 0);
    CHECK(confined(rules, [&] { return ::access("/bin/sh", X_OK) == 0 ? 0 : 1; }) == 0);
}

TEST_CASE("a confined process makes no Unix socket, so it reaches no program listening on one") {
    if (no_landlock()) return;
    Scratch s;
    board::Confinement rules;
    rules.writable = {s.dir / "open"};
    // A program outside the sandbox listening on a socket file (a session bus, tmux, docker).
    const fs::path path = s.dir / "open" / "outside.sock";
    const int listener = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(listener >= 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::snprintf(address.sun_path, sizeof address.sun_path, "%s", path.c_str());
    REQUIRE(::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
    REQUIRE(::listen(listener, 4) == 0);
    CHECK(confined(rules, [&] {
              const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
              if (fd >= 0) {
                  const bool reached =
                      ::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) ==
                      0;
                  return reached ? 3 : 2;
              }
              return errno == EACCES ? 1 : 2;
          }) == 1);
    // What runtimes need still works: a socket pair for pipes, and the network.
    CHECK(confined(rules, [] {
              int pair[2];
              return ::socketpair(AF_UNIX, SOCK_STREAM, 0, pair) == 0 ? 0 : 1;
          }) == 0);
    CHECK(confined(rules, [] { return ::socket(AF_INET, SOCK_STREAM, 0) >= 0 ? 0 : 1; }) == 0);
    // Nor through io_uring, whose socket operation needs no socket() call: it is absent.
    CHECK(confined(rules, [] {
              char params[120] = {};  // struct io_uring_params, zeroed
              return ::syscall(425 /* io_uring_setup */, 4, params) < 0 && errno == ENOSYS ? 0 : 1;
          }) == 0);
    ::close(listener);
    if (board::landlock_abi() >= 6) {
        // Nor does it signal a process outside its sandbox.
        const pid_t outside = ::getpid();
        CHECK(confined(rules, [&] { return ::kill(outside, 0) == 0 ? 0 : 1; }) == 1);
    }
}

TEST_CASE("a ruleset prepared by the launcher confines only the child that enforces it") {
    if (no_landlock()) return;
    Scratch s;
    board::Confinement rules;
    rules.writable = {s.dir / "open"};
    std::string problem;
    const int reading = board::prepare_reading(rules.hidden, problem);
    const int writing = board::prepare_writing(rules, problem);
    REQUIRE(reading >= 0);
    REQUIRE(writing >= 0);
    CHECK(problem.empty());
    CHECK((::fcntl(reading, F_GETFD) & FD_CLOEXEC) != 0);  // an agent never holds them
    CHECK((::fcntl(writing, F_GETFD) & FD_CLOEXEC) != 0);

    const pid_t pid = ::fork();
    if (pid == 0) {
        if (board::enforce_confinement(reading, writing) != 0) ::_exit(100);
        const int inside = try_open(s.dir / "open" / "draft.md", O_WRONLY | O_CREAT);
        const int outside = try_open(s.dir / "closed" / "log.jsonl", O_WRONLY | O_APPEND);
        ::_exit(inside == 0 && outside == 1 ? 0 : 1);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    ::close(reading);
    ::close(writing);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    // The launcher itself is as free as before.
    CHECK(try_open(s.dir / "closed" / "log.jsonl", O_WRONLY | O_APPEND) == 0);
}

/// 0 when a child under `writing` (and no reading ruleset) can make a file in each of `may`
/// and in none of `may_not`, else 1; 100 when it could not be confined.
int writes_only(int writing,
                const std::vector<fs::path>& may,
                const std::vector<fs::path>& may_not) {
    const pid_t pid = ::fork();
    if (pid == 0) {
        if (board::enforce_confinement(-1, writing) != 0) ::_exit(100);
        for (const auto& folder : may)
            if (try_open(folder / "made", O_WRONLY | O_CREAT) != 0) ::_exit(1);
        for (const auto& folder : may_not)
            if (try_open(folder / "made", O_WRONLY | O_CREAT) != 1) ::_exit(1);
        ::_exit(0);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 200;
}

TEST_CASE("the shared places kept open follow their paths when a place is made or replaced") {
    if (no_landlock()) return;
    Scratch s;
    board::Confinement shared;
    shared.writable = {s.dir / "open", s.dir / "later", s.dir / "closed"};
    shared.hidden = {s.dir / "closed" / "secrets" / "token"};
    fs::create_directories(s.dir / "run");
    board::Confinement own;
    own.writable = {s.dir / "run"};
    own.hidden = shared.hidden;
    board::KeptWritingPlaces kept(shared.writable);
    std::string problem;
    const auto run_under = [&](const std::vector<fs::path>& may,
                               const std::vector<fs::path>& may_not) {
        const board::UniqueFd writing{kept.prepare(own, problem)};
        REQUIRE(writing);
        return writes_only(writing.get(), may, may_not);
    };
    // A shared place, the run's own; not a place that holds the hidden file, nor one missing.
    fs::create_directories(s.dir / "elsewhere");
    CHECK(run_under({s.dir / "open", s.dir / "run"}, {s.dir / "closed", s.dir / "elsewhere"}) == 0);
    // A place made after the first run is granted from the next one on.
    fs::create_directories(s.dir / "later");
    CHECK(run_under({s.dir / "later", s.dir / "open"}, {}) == 0);
    // A place replaced: the folder its path names now is granted, not the one held before.
    fs::remove_all(s.dir / "open");
    fs::create_directories(s.dir / "open");
    CHECK(run_under({s.dir / "open"}, {}) == 0);
    // A place replaced by a link is granted nothing, as prepare_writing would.
    fs::remove_all(s.dir / "later");
    fs::create_directory_symlink(s.dir / "elsewhere", s.dir / "later");
    CHECK(run_under({s.dir / "open"}, {s.dir / "later", s.dir / "elsewhere"}) == 0);
    // A run that hides a file of a shared place is not granted that place.
    own.hidden.push_back(s.dir / "open" / "secret");
    CHECK(run_under({s.dir / "run"}, {s.dir / "open"}) == 0);
    CHECK(problem.empty());
}

TEST_CASE("a confined process moves files between the folders it may write, and only there") {
    if (board::landlock_abi() < 2) {
        WARN("this kernel has no Landlock ABI 2: moves between folders are not ruled here");
        return;
    }
    Scratch s;
    fs::create_directories(s.dir / "open" / "objects");
    board::Confinement rules;
    rules.writable = {s.dir / "open"};
    rules.hidden = {s.dir / "closed" / "secrets" / "token"};
    const auto moved = [](const fs::path& from, const fs::path& to) {
        return ::rename(from.c_str(), to.c_str()) == 0 ? 0 : (errno == EACCES ? 1 : 2);
    };
    // What git does for every object: a temp file renamed into another folder.
    CHECK(confined(rules, [&] {
              std::ofstream(s.dir / "open" / "tmp_obj") << "blob";
              return moved(s.dir / "open" / "tmp_obj", s.dir / "open" / "objects" / "ab");
          }) == 0);
    CHECK(fs::exists(s.dir / "open" / "objects" / "ab"));
    // Out of the writable folder, into it, and the hidden file linked where it could be read.
    CHECK(confined(rules, [&] {
              return moved(s.dir / "open" / "objects" / "ab", s.dir / "closed" / "ab");
          }) != 0);
    CHECK(confined(rules, [&] {
              return moved(s.dir / "closed" / "log.jsonl", s.dir / "open" / "log.jsonl");
          }) != 0);
    CHECK(confined(rules, [&] {
              const fs::path token = s.dir / "closed" / "secrets" / "token";
              return ::link(token.c_str(), (s.dir / "open" / "token").c_str()) == 0 ? 0 : 1;
          }) == 1);
    CHECK(fs::exists(s.dir / "closed" / "log.jsonl"));
    CHECK_FALSE(fs::exists(s.dir / "open" / "token"));
}

TEST_CASE("the kept reading rules are made again when a folder they list changes") {
    if (no_landlock()) return;
    Scratch s;
    board::KeptReadingRules kept({s.dir / "closed" / "secrets" / "token"});
    std::string problem;
    // A listing made too soon after a listed folder changed (the scratch folders were just
    // made; other tests write to temp) is made again; once none changes, it is kept.
    auto settled = kept.current(problem);
    REQUIRE(settled != nullptr);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds{20};
    for (auto again = kept.current(problem); again != settled; again = kept.current(problem)) {
        REQUIRE(again != nullptr);
        REQUIRE(std::chrono::steady_clock::now() < deadline);
        settled = again;
    }

    // A file made beside the hidden one afterwards: the old rules know nothing of it.
    std::ofstream(s.dir / "closed" / "secrets" / "later") << "new\n";
    const auto remade = kept.current(problem);
    REQUIRE(remade != nullptr);
    CHECK(remade != settled);
    const auto reads = [&](const std::shared_ptr<const board::UniqueFd>& rules,
                           const fs::path& file) {
        const int fd = rules->get();
        const pid_t pid = ::fork();
        if (pid == 0) {
            if (board::enforce_confinement(fd, -1) != 0) ::_exit(100);
            ::_exit(try_open(file, O_RDONLY));
        }
        int status = 0;
        ::waitpid(pid, &status, 0);
        return WIFEXITED(status) ? WEXITSTATUS(status) : 200;
    };
    CHECK(reads(settled, s.dir / "closed" / "secrets" / "later") == 1);
    CHECK(reads(remade, s.dir / "closed" / "secrets" / "later") == 0);
    CHECK(reads(remade, s.dir / "closed" / "secrets" / "token") == 1);
}

TEST_CASE("path_is_within compares whole components") {
    CHECK(board::path_is_within("/a/b/c", "/a/b"));
    CHECK(board::path_is_within("/a/b", "/a/b"));
    CHECK(board::path_is_within("/a/b/", "/a/b"));
    CHECK_FALSE(board::path_is_within("/a/bc", "/a/b"));
    CHECK_FALSE(board::path_is_within("/a", "/a/b"));
    CHECK(board::path_is_within("/anything", "/"));
}

TEST_CASE("a thread that filters itself hands the filter to what it starts, and only it") {
    // The filter stands without Landlock; the daemon filters a thread only where Landlock is.
    int in_child = -1;
    bool thread_filtered = false;
    std::thread launching([&] {
        thread_filtered = board::filter_this_thread() == 0;
        const pid_t pid = ::fork();
        if (pid == 0) {
            const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
            ::_exit(fd >= 0 ? 0 : (errno == EACCES ? 1 : 2));
        }
        int status = 0;
        ::waitpid(pid, &status, 0);
        in_child = WIFEXITED(status) ? WEXITSTATUS(status) : 200;
    });
    launching.join();
    if (!thread_filtered) {
        WARN("this kernel has no seccomp filters: nothing to test");
        return;
    }
    CHECK(in_child == 1);  // refused, with no filter installed by the child itself
    // The process's other threads are as they were: this one still makes Unix sockets.
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    CHECK(fd >= 0);
    if (fd >= 0) ::close(fd);
}

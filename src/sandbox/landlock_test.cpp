#include <board/sandbox.hpp>

#include <catch2/catch.hpp>

#include <cerrno>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sys/wait.h>
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
    if (board::landlock_abi() == 0) {
        WARN("this kernel has no Landlock: the sandbox is off here, nothing to test");
        return;
    }
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

TEST_CASE("a ruleset prepared by the launcher confines only the child that enforces it") {
    if (board::landlock_abi() == 0) {
        WARN("this kernel has no Landlock: the sandbox is off here, nothing to test");
        return;
    }
    Scratch s;
    board::Confinement rules;
    rules.writable = {s.dir / "open"};
    std::string problem;
    const int ruleset = board::prepare_confinement(rules, problem);
    REQUIRE(ruleset >= 0);
    CHECK(problem.empty());
    CHECK((::fcntl(ruleset, F_GETFD) & FD_CLOEXEC) != 0);  // an agent never holds it

    const pid_t pid = ::fork();
    if (pid == 0) {
        if (board::enforce_confinement(ruleset) != 0) ::_exit(100);
        const int inside = try_open(s.dir / "open" / "draft.md", O_WRONLY | O_CREAT);
        const int outside = try_open(s.dir / "closed" / "log.jsonl", O_WRONLY | O_APPEND);
        ::_exit(inside == 0 && outside == 1 ? 0 : 1);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    ::close(ruleset);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    // The launcher itself is as free as before.
    CHECK(try_open(s.dir / "closed" / "log.jsonl", O_WRONLY | O_APPEND) == 0);
}

TEST_CASE("path_is_within compares whole components") {
    CHECK(board::path_is_within("/a/b/c", "/a/b"));
    CHECK(board::path_is_within("/a/b", "/a/b"));
    CHECK(board::path_is_within("/a/b/", "/a/b"));
    CHECK_FALSE(board::path_is_within("/a/bc", "/a/b"));
    CHECK_FALSE(board::path_is_within("/a", "/a/b"));
    CHECK(board::path_is_within("/anything", "/"));
}

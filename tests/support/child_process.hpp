#pragma once
// Real processes for end-to-end tests: started with posix_spawn, stdout and stderr in files,
// waited for with a deadline. Header-only, Catch2 for the failures.

#include "support/wait.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <spawn.h>
#include <sstream>
#include <string>
#include <sys/resource.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <utility>
#include <vector>

extern char** environ;  // NOLINT: POSIX

namespace board::testing {

inline std::string read_file(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

inline void write_file(const std::filesystem::path& p, const std::string& text) {
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
}

/// A child process with stdout and stderr in files.
struct Child {
    pid_t pid = -1;
    std::filesystem::path out, err;

    /// Waits up to `limit`, then SIGKILLs. Returns the exit code (128+signal if killed).
    int wait(std::chrono::milliseconds limit = std::chrono::seconds{120}, rusage* usage = nullptr) {
        int status = 0;
        rusage local{};
        if (!wait_for_end(pid, limit)) {
            ::kill(pid, SIGKILL);
            ::wait4(pid, &status, 0, usage ? usage : &local);
            FAIL("process " << pid << " did not finish in time; stderr: " << read_file(err));
        }
        ::wait4(pid, &status, 0, usage ? usage : &local);
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }

    std::string stdout_text() const { return read_file(out); }

    std::string stderr_text() const { return read_file(err); }
};

/// Starts `argv` (argv[0] a path) with this process's environment plus `env` (NAME=value,
/// replacing a variable of the same name), stdout and stderr in `out_dir/<name>.out|.err`.
inline Child spawn(const std::vector<std::string>& argv,
                   const std::filesystem::path& out_dir,
                   const std::string& name,
                   const std::vector<std::string>& env = {}) {
    Child c;
    c.out = out_dir / (name + ".out");
    c.err = out_dir / (name + ".err");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(
        &actions, 1, c.out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(
        &actions, 2, c.err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));  // NOLINT: POSIX
    args.push_back(nullptr);
    std::vector<std::string> merged;
    for (char** e = environ; e && *e; ++e) {
        const std::string_view kv{*e};
        const auto key = kv.substr(0, kv.find('=') + 1);
        bool replaced = false;
        for (const auto& mine : env) replaced = replaced || std::string_view{mine}.starts_with(key);
        if (!replaced) merged.emplace_back(kv);
    }
    merged.insert(merged.end(), env.begin(), env.end());
    std::vector<char*> envp;
    for (auto& kv : merged) envp.push_back(kv.data());
    envp.push_back(nullptr);
    const int rc = ::posix_spawn(&c.pid, args[0], &actions, nullptr, args.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    REQUIRE(rc == 0);
    return c;
}

}  // namespace board::testing

#include "cli/doctor.hpp"

#include <board/board_config.hpp>
#include <board/sandbox.hpp>

#include <fmt/format.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <poll.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;  // NOLINT: POSIX

namespace board::cli {
namespace {

namespace fs = std::filesystem;
using Verdict = DoctorCheck::Verdict;

/// `name` on PATH (or as a path), like the daemon finds an agent.
std::string find_on_path(const std::string& name) {
    if (name.find('/') != std::string::npos) return ::access(name.c_str(), X_OK) == 0 ? name : "";
    const char* path = std::getenv("PATH");
    std::string_view rest = path ? path : "/usr/local/bin:/usr/bin:/bin";
    while (!rest.empty()) {
        const auto colon = rest.find(':');
        const fs::path candidate = fs::path{rest.substr(0, colon)} / name;
        if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
        if (colon == std::string_view::npos) break;
        rest.remove_prefix(colon + 1);
    }
    return "";
}

struct Ran {
    int exit_code = -1;  ///< -1: could not start or did not finish in time
    std::string output;  ///< stdout and stderr, at most 64 KB
};

/// Runs `argv` (argv[0] a full path) with stdin on /dev/null, for at most `limit`.
Ran run_for(const std::vector<std::string>& argv, std::chrono::milliseconds limit) {
    Ran ran;
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return ran;
    posix_spawn_file_actions_t actions;
    ::posix_spawn_file_actions_init(&actions);
    ::posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    ::posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
    ::posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
    posix_spawnattr_t attributes;
    ::posix_spawnattr_init(&attributes);
    ::posix_spawnattr_setpgroup(&attributes, 0);
    ::posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));  // NOLINT: POSIX
    args.push_back(nullptr);
    pid_t pid = -1;
    const int rc = ::posix_spawn(&pid, args[0], &actions, &attributes, args.data(), environ);
    ::posix_spawn_file_actions_destroy(&actions);
    ::posix_spawnattr_destroy(&attributes);
    ::close(fds[1]);
    if (rc != 0) {
        ::close(fds[0]);
        return ran;
    }
    const auto deadline = std::chrono::steady_clock::now() + limit;
    char buffer[4096];
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) break;
        pollfd p{fds[0], POLLIN, 0};
        if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
        const ssize_t n = ::read(fds[0], buffer, sizeof buffer);
        if (n <= 0) break;
        if (ran.output.size() < 65536) ran.output.append(buffer, static_cast<std::size_t>(n));
    }
    ::close(fds[0]);
    // Its output ended; its exit follows, or the deadline does.
    int status = 0;
    while (::waitpid(pid, &status, WNOHANG) == 0) {
        if (std::chrono::steady_clock::now() >= deadline) {
            ::kill(-pid, SIGKILL);  // not done in time: it and what it started
            ::waitpid(pid, &status, 0);
            return ran;
        }
        ::poll(nullptr, 0, 10);
    }
    ran.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return ran;
}

std::string first_line(const std::string& text) {
    const auto start = text.find_first_not_of(" \t\r\n");
    if (start == std::string::npos) return "";
    return text.substr(start, text.find('\n', start) - start);
}

bool is_there(const fs::path& p) {
    std::error_code ec;
    return fs::exists(p, ec);
}

/// Where each CLI looks for its credentials; nullopt when the dialect has none to look for.
std::string credentials_of(DialectKind dialect) {
    const char* home_env = std::getenv("HOME");
    const fs::path home = home_env ? home_env : "";
    auto env = [](const char* name) {
        const char* v = std::getenv(name);
        return v && *v;
    };
    switch (dialect) {
        case DialectKind::claude: {
            if (env("ANTHROPIC_API_KEY")) return "ANTHROPIC_API_KEY is set";
            if (env("ANTHROPIC_AUTH_TOKEN")) return "ANTHROPIC_AUTH_TOKEN is set";
            if (env("CLAUDE_CODE_OAUTH_TOKEN")) return "CLAUDE_CODE_OAUTH_TOKEN is set";
            const char* config = std::getenv("CLAUDE_CONFIG_DIR");
            const fs::path dir = config && *config ? fs::path{config} : home / ".claude";
            if (is_there(dir / ".credentials.json")) return (dir / ".credentials.json").string();
            return "";
        }
        case DialectKind::codex: {
            if (env("OPENAI_API_KEY")) return "OPENAI_API_KEY is set";
            const char* codex_home = std::getenv("CODEX_HOME");
            const fs::path dir = codex_home && *codex_home ? fs::path{codex_home} : home / ".codex";
            if (is_there(dir / "auth.json")) return (dir / "auth.json").string();
            if (is_there(dir / "config.toml"))
                return (dir / "config.toml").string() + " (a provider of its own?)";
            return "";
        }
        case DialectKind::gemini:
            if (env("GEMINI_API_KEY")) return "GEMINI_API_KEY is set";
            if (env("GOOGLE_API_KEY")) return "GOOGLE_API_KEY is set";
            if (is_there(home / ".gemini" / "oauth_creds.json"))
                return (home / ".gemini" / "oauth_creds.json").string();
            return "";
        case DialectKind::generic:
            break;
    }
    return "not needed";
}

std::string login_hint(DialectKind dialect) {
    switch (dialect) {
        case DialectKind::claude:
            return "set ANTHROPIC_API_KEY, or run `claude` once and log in";
        case DialectKind::codex:
            return "set OPENAI_API_KEY, or run `codex login`";
        case DialectKind::gemini:
            return "set GEMINI_API_KEY, or run `gemini` once and log in";
        case DialectKind::generic:
            break;
    }
    return "";
}

}  // namespace

std::vector<DoctorCheck> check_board(const fs::path& board) {
    std::vector<DoctorCheck> checks;
    auto add = [&](Verdict v, std::string topic, std::string detail) {
        checks.push_back({v, std::move(topic), std::move(detail)});
    };
    const auto loaded = load_board_config(board / "board.yaml");
    if (!loaded) {
        add(Verdict::failure, "board.yaml", loaded.error().message);
        return checks;
    }
    const BoardConfig& config = loaded.value();
    add(Verdict::ok, "board.yaml", "loads");

    // Each program once, with the phases that run it.
    std::map<std::string, std::pair<const AgentConfig*, std::string>> programs;
    bool confined_wanted = false;
    bool landlock_required = false;
    for (const Status phase : all_statuses) {
        const AgentConfig* agent = config.agent(phase);
        if (!agent || (phase == Status::review && !agent->enabled)) continue;
        auto& [first, phases] = programs[agent->command.front()];
        if (!first) first = agent;
        phases += (phases.empty() ? "" : ", ") + std::string{to_string(phase)};
        confined_wanted = confined_wanted || agent->sandbox != SandboxMode::none;
        landlock_required = landlock_required || agent->sandbox == SandboxMode::landlock;
    }
    for (const auto& [program, entry] : programs) {
        const auto& [agent, phases] = entry;
        const std::string topic = fmt::format("agent {} ({})", program, phases);
        const std::string found = find_on_path(program);
        if (found.empty()) {
            add(Verdict::failure, topic, "`" + program + "` was not found on PATH");
            continue;
        }
        const auto version = version_command(agent->dialect, {found});
        if (!version.empty()) {
            const Ran ran = run_for(version, std::chrono::seconds{20});
            if (ran.exit_code != 0) {
                add(Verdict::failure,
                    topic,
                    fmt::format("`{} --version` {}: {}",
                                program,
                                ran.exit_code < 0 ? "did not answer in 20 s"
                                                  : "exited with " + std::to_string(ran.exit_code),
                                first_line(ran.output)));
                continue;
            }
            add(Verdict::ok,
                topic,
                fmt::format("{} ({} dialect)", first_line(ran.output), to_string(agent->dialect)));
        } else {
            add(Verdict::ok, topic, found + " (generic dialect)");
        }
        const std::string credentials = credentials_of(agent->dialect);
        if (credentials.empty())
            add(Verdict::warning, topic, "no credentials found: " + login_hint(agent->dialect));
        else if (credentials != "not needed")
            add(Verdict::ok, topic, "credentials: " + credentials);
    }

    if (config.implementing.worktree) {
        const std::string git = find_on_path("git");
        const Ran head =
            git.empty()
                ? Ran{}
                : run_for({git, "-C", board.string(), "rev-parse", "--verify", "--quiet", "HEAD"},
                          std::chrono::seconds{20});
        if (git.empty())
            add(Verdict::failure,
                "git",
                "implementing runs in a git worktree, and git is not on PATH");
        else if (head.exit_code != 0)
            add(Verdict::failure,
                "git",
                "implementing runs in a git worktree: " + board.string() +
                    " must be in a git repository with a commit (or set "
                    "agents.implementing.worktree: false)");
        else
            add(Verdict::ok, "git", "a repository with a commit: worktrees can be made");
    }

    if (::access((board / "tickets").c_str(), W_OK) != 0)
        add(Verdict::failure,
            "tickets/",
            (board / "tickets").string() + ": " + std::strerror(errno));
    else
        add(Verdict::ok, "tickets/", "writable");

    struct stat st {};

    if (::stat((board / ".board").c_str(), &st) == 0) {
        if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
            add(Verdict::failure,
                ".board/",
                fmt::format("mode {:o}: others can write it (chmod go-w {})",
                            st.st_mode & 0777U,
                            (board / ".board").string()));
        else
            add(Verdict::ok, ".board/", "only its owner can write it");
    }
    if (::stat((board / ".board" / "http-token").c_str(), &st) == 0 &&
        (st.st_mode & (S_IRWXG | S_IRWXO)) != 0)
        add(Verdict::failure,
            ".board/http-token",
            "others can read it (chmod 600 it): the HTTP API would refuse to start");

    const int abi = landlock_abi();
    if (!confined_wanted)
        add(Verdict::warning, "sandbox", "sandbox: none: agents can do whatever you can");
    else if (abi > 0)
        add(Verdict::ok, "sandbox", fmt::format("Landlock ABI {}: agents are confined", abi));
    else
        add(landlock_required ? Verdict::failure : Verdict::warning,
            "sandbox",
            "this kernel offers no Landlock: agents would run unconfined");
    return checks;
}

}  // namespace board::cli

#include "cli/doctor.hpp"

#include "support/process.hpp"

#include <board/board_config.hpp>
#include <board/sandbox.hpp>

#include <fmt/format.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <sys/stat.h>
#include <unistd.h>

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

std::string first_output_line(const std::string& text) {
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
            const Captured ran = run_captured(version, std::chrono::seconds{20});
            if (ran.exit_code != 0) {
                add(Verdict::failure,
                    topic,
                    fmt::format("`{} --version` {}: {}",
                                program,
                                ran.exit_code < 0 ? "did not answer in 20 s"
                                                  : "exited with " + std::to_string(ran.exit_code),
                                first_output_line(ran.output)));
                continue;
            }
            add(Verdict::ok,
                topic,
                fmt::format(
                    "{} ({} dialect)", first_output_line(ran.output), to_string(agent->dialect)));
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
        const Captured head =
            git.empty()
                ? Captured{}
                : run_captured(
                      {git, "-C", board.string(), "rev-parse", "--verify", "--quiet", "HEAD"},
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

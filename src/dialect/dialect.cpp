#include "dialect/readers.hpp"

#include <board/agent_dialect.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <filesystem>

namespace board {
namespace {

/// A flag group the dialect adds unless the command has any of `unless` already.
struct Ensure {
    std::vector<std::string_view> unless;
    std::vector<std::string_view> add;
};

/// Everything a dialect adds to a command, as data.
struct DialectRules {
    DialectKind kind;
    std::string_view name;
    /// Inserted right after argv[0] unless argv[1] is already it (`codex exec`).
    std::string_view subcommand;
    std::vector<Ensure> ensure;
    /// Added when the board does not confine the agent (the CLI's own sandbox, if it has
    /// one) and when it does (that sandbox off: Landlock is in charge, and a sandbox that
    /// mounts cannot start inside it).
    Ensure own_sandbox;
    Ensure own_sandbox_off;
    std::string_view writable_flag;  ///< repeated once per writable folder; empty: none
    std::string_view steps_flag;     ///< gets max_steps; empty: the CLI has no such limit
    /// How a session is resumed: `flag` then the id, or, for a `subcommand`, the words after
    /// every option (`resume <id>`).
    std::string_view resume_flag;
    bool resume_is_subcommand = false;
    /// Appended last: how the CLI is told to read the prompt from standard input.
    std::string_view stdin_marker;
    std::vector<std::pair<std::string_view, std::string_view>> env_defaults;
};

const std::vector<std::string_view> codex_sandbox_flags{
    "--sandbox", "-s", "--full-auto", "--dangerously-bypass-approvals-and-sandbox", "--yolo"};

const std::vector<DialectRules>& dialect_table() {
    static const std::vector<DialectRules> table{
        {
            .kind = DialectKind::claude,
            .name = "claude",
            .subcommand = {},
            .ensure =
                {
                    // Print mode, with the JSON event stream that carries cost and session.
                    {{"-p", "--print"}, {"-p"}},
                    {{"--output-format"}, {"--output-format", "stream-json"}},
                    {{"--verbose"}, {"--verbose"}},
                    // In -p mode nobody can grant a permission, so edits are allowed up front:
                    // to the working directory and the --add-dir folders only.
                    {{"--permission-mode", "--dangerously-skip-permissions"},
                     {"--permission-mode", "acceptEdits"}},
                },
            .own_sandbox = {},
            .own_sandbox_off = {},
            .writable_flag = "--add-dir",
            .steps_flag = "--max-turns",
            .resume_flag = "--resume",
            .stdin_marker = {},
            .env_defaults =
                {
                    // Claude Code retries a failing API ten times with backoff (minutes);
                    // the board retries runs itself, so one quick retry is enough here.
                    {"CLAUDE_CODE_MAX_RETRIES", "1"},
                    {"DISABLE_AUTOUPDATER", "1"},
                    {"DISABLE_TELEMETRY", "1"},
                    {"DISABLE_ERROR_REPORTING", "1"},
                    {"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"},
                },
        },
        {
            .kind = DialectKind::codex,
            .name = "codex",
            .subcommand = "exec",
            .ensure =
                {
                    {{"--json", "--experimental-json"}, {"--json"}},
                    {{"--skip-git-repo-check"}, {"--skip-git-repo-check"}},
                },
            // Its own sandbox: edits in the working directory and the --add-dir folders.
            .own_sandbox = {codex_sandbox_flags, {"--sandbox", "workspace-write"}},
            .own_sandbox_off = {codex_sandbox_flags, {"--sandbox", "danger-full-access"}},
            .writable_flag = "--add-dir",
            .steps_flag = {},
            .resume_flag = "resume",
            .resume_is_subcommand = true,
            .stdin_marker = "-",
            .env_defaults = {},
        },
        {
            .kind = DialectKind::gemini,
            .name = "gemini",
            .subcommand = {},
            .ensure =
                {
                    {{"--output-format", "-o"}, {"--output-format", "stream-json"}},
                    {{"--approval-mode", "--yolo", "-y"}, {"--approval-mode", "auto_edit"}},
                },
            .own_sandbox = {},
            .own_sandbox_off = {},
            .writable_flag = "--include-directories",
            .steps_flag = {},
            .resume_flag = "--resume",
            .stdin_marker = {},
            .env_defaults = {},
        },
        {
            .kind = DialectKind::generic,
            .name = "generic",
            .subcommand = {},
            .ensure = {},
            .own_sandbox = {},
            .own_sandbox_off = {},
            .writable_flag = {},
            .steps_flag = {},
            .resume_flag = {},
            .stdin_marker = {},
            .env_defaults = {},
        },
    };
    return table;
}

const DialectRules& rules_of(DialectKind kind) {
    for (const auto& row : dialect_table())
        if (row.kind == kind) return row;
    return dialect_table().back();
}

/// Whether the command (past argv[0]) has `what` already: a flag as itself or `flag=value`;
/// a config key (no leading `-`) anywhere in an argument (`-c key=value`).
bool mentions(const std::vector<std::string>& argv, std::string_view what) {
    return std::any_of(argv.begin() + 1, argv.end(), [&](const std::string& a) {
        if (!what.starts_with('-')) return a.find(what) != std::string::npos;
        return a == what ||
               (a.size() > what.size() && a.starts_with(what) && a[what.size()] == '=');
    });
}

std::string lower(std::string_view s) {
    std::string out{s};
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

}  // namespace

std::string_view to_string(DialectKind kind) {
    return rules_of(kind).name;
}

std::optional<DialectKind> parse_dialect(std::string_view name) {
    for (const auto& row : dialect_table())
        if (row.name == name) return row.kind;
    return std::nullopt;
}

DialectKind dialect_of_command(const std::vector<std::string>& command) {
    if (command.empty()) return DialectKind::generic;
    std::string name = lower(std::filesystem::path{command.front()}.filename().string());
    for (const std::string_view suffix : {".exe", ".js", ".cmd", "-cli"}) {
        if (name.size() > suffix.size() && name.ends_with(suffix))
            name.resize(name.size() - suffix.size());
    }
    return parse_dialect(name).value_or(DialectKind::generic);
}

LaunchPlan plan_launch(DialectKind kind, const LaunchRequest& request) {
    const DialectRules& rules = rules_of(kind);
    LaunchPlan plan;
    plan.argv = request.command;
    if (plan.argv.empty()) return plan;
    if (!rules.subcommand.empty() && (plan.argv.size() < 2 || plan.argv[1] != rules.subcommand)) {
        plan.argv.insert(plan.argv.begin() + 1, std::string{rules.subcommand});
    }
    auto ensure = [&](const Ensure& e) {
        const bool present = std::any_of(
            e.unless.begin(), e.unless.end(), [&](auto f) { return mentions(plan.argv, f); });
        if (!present) plan.argv.insert(plan.argv.end(), e.add.begin(), e.add.end());
    };
    for (const Ensure& e : rules.ensure) ensure(e);
    ensure(request.confined ? rules.own_sandbox_off : rules.own_sandbox);
    if (!rules.writable_flag.empty()) {
        for (const auto& dir : request.writable) {
            plan.argv.emplace_back(rules.writable_flag);
            plan.argv.push_back(dir.string());
        }
    }
    if (!rules.steps_flag.empty() && !mentions(plan.argv, rules.steps_flag)) {
        plan.argv.emplace_back(rules.steps_flag);
        plan.argv.push_back(std::to_string(request.max_steps));
    }
    if (!request.resume_session.empty() && !rules.resume_flag.empty()) {
        plan.argv.emplace_back(rules.resume_flag);
        plan.argv.push_back(request.resume_session);
    }
    if (!rules.stdin_marker.empty()) plan.argv.emplace_back(rules.stdin_marker);
    for (const auto& [key, value] : rules.env_defaults)
        plan.env_defaults.emplace_back(std::string{key}, std::string{value});
    return plan;
}

std::vector<std::string> version_command(DialectKind kind,
                                         const std::vector<std::string>& command) {
    if (command.empty() || kind == DialectKind::generic) return {};
    return {command.front(), "--version"};
}

Retry classify_error(std::string_view error_text) {
    // Matched case-insensitively, as substrings, each phrase specific enough that a port, a
    // request id or a line of test output does not match it. A credential or a command line
    // that is wrong stays wrong however often the run is retried.
    static constexpr std::array<std::string_view, 28> futile{
        "status 401",
        "status: 401",
        "status 403",
        "status: 403",
        "401 unauthorized",
        "403 forbidden",
        "http 401",
        "http 403",
        "error: 401",
        "error: 403",
        "(401)",
        "(403)",
        "authentication_error",
        "authentication failed",
        "authentication_failed",
        "permission_error",
        "invalid api key",
        "invalid x-api-key",
        "invalid_api_key",
        "incorrect api key",
        "not logged in",
        "please run /login",
        "unknown option",
        "unexpected argument",
        "unrecognized argument",
        "error: invalid value",
        "was not found on path",
        "missing environment variable",
    };
    const std::string text = lower(error_text);
    if (text.starts_with("usage:")) return Retry::futile;
    const bool permanent = std::any_of(futile.begin(), futile.end(), [&](std::string_view p) {
        return text.find(p) != std::string::npos;
    });
    return permanent ? Retry::futile : Retry::helps;
}

std::unique_ptr<OutputReader> make_output_reader(DialectKind kind, std::string_view prompt) {
    switch (kind) {
        case DialectKind::claude:
            return dialect_detail::make_claude_reader();
        case DialectKind::codex:
            return dialect_detail::make_codex_reader();
        case DialectKind::gemini:
            return dialect_detail::make_gemini_reader();
        case DialectKind::generic:
            break;
    }
    return dialect_detail::make_generic_reader(prompt);
}

}  // namespace board

namespace board {

void OutputReader::show_progress(std::string_view text) {
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ' || text.back() == '\r'))
        text.remove_suffix(1);
    const auto nl = text.rfind('\n');
    if (nl != std::string_view::npos) text.remove_prefix(nl + 1);
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
    if (text.empty()) return;
    std::size_t n = std::min<std::size_t>(text.size(), 200);
    while (n > 0 && n < text.size() && (static_cast<unsigned char>(text[n]) & 0xC0U) == 0x80U) --n;
    progress_.assign(text.substr(0, n));
}

}  // namespace board

// BoardConfig's defaults and the text that spells them out: each phase's agent settings, the
// commented board.yaml that `board init` writes (board_config_test round-trips it through the
// loader in board_config.cpp), and the prefix and duration spellings the file uses.

#include <board/board_config.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <system_error>

namespace board {

namespace {

using std::chrono::milliseconds;

}  // namespace

std::vector<std::string> default_agent_command() {
    return {"claude"};
}

AgentConfig default_agent_config(Status phase) {
    AgentConfig agent;
    agent.command = default_agent_command();
    switch (phase) {
        case Status::implementing:
            agent.max_steps = 30;
            agent.worktree = true;
            break;
        case Status::review:
            agent.max_steps = 10;
            break;
        default:
            agent.max_steps = 15;
            break;
    }
    return agent;
}

const AgentConfig* BoardConfig::agent(Status phase) const {
    switch (phase) {
        case Status::research:
            return &research;
        case Status::planning:
            return &planning;
        case Status::implementing:
            return &implementing;
        case Status::review:
            return &review;
        default:
            return nullptr;
    }
}

bool is_valid_prefix(std::string_view prefix) {
    if (prefix.empty() || prefix.size() > 16) return false;
    if (prefix.front() < 'A' || prefix.front() > 'Z') return false;
    return std::all_of(prefix.begin(), prefix.end(), [](char c) {
        return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    });
}

std::optional<milliseconds> parse_duration(std::string_view text) {
    std::size_t digits = 0;
    while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
    if (digits == 0) return std::nullopt;
    const std::string_view unit = text.substr(digits);
    std::int64_t scale = 0;
    if (unit == "ms") scale = 1;
    if (unit == "s") scale = 1'000;
    if (unit == "m") scale = 60'000;
    if (unit == "h") scale = 3'600'000;
    if (scale == 0) return std::nullopt;
    std::int64_t count = 0;
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + digits, count);
    if (ec != std::errc{} || ptr != text.data() + digits) return std::nullopt;
    if (count > max_duration.count() / scale) return std::nullopt;
    return milliseconds{count * scale};
}

std::string format_duration(milliseconds d) {
    const std::int64_t ms = d.count();
    if (ms != 0 && ms % 3'600'000 == 0) return fmt::format("{}h", ms / 3'600'000);
    if (ms != 0 && ms % 60'000 == 0) return fmt::format("{}m", ms / 60'000);
    if (ms != 0 && ms % 1'000 == 0) return fmt::format("{}s", ms / 1'000);
    return fmt::format("{}ms", ms);
}

std::optional<std::uint64_t> parse_size(std::string_view text) {
    std::size_t digits = 0;
    while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
    if (digits == 0) return std::nullopt;
    const std::string_view unit = text.substr(digits);
    std::uint64_t scale = 0;
    if (unit == "B") scale = 1;
    if (unit == "KB") scale = 1ull << 10;
    if (unit == "MB") scale = 1ull << 20;
    if (unit == "GB") scale = 1ull << 30;
    if (scale == 0) return std::nullopt;
    std::uint64_t count = 0;
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + digits, count);
    if (ec != std::errc{} || ptr != text.data() + digits) return std::nullopt;
    if (count > (std::uint64_t{1} << 63) / scale) return std::nullopt;
    return count * scale;
}

std::string format_size(std::uint64_t bytes) {
    if (bytes != 0 && bytes % (1ull << 30) == 0) return fmt::format("{}GB", bytes >> 30);
    if (bytes != 0 && bytes % (1ull << 20) == 0) return fmt::format("{}MB", bytes >> 20);
    if (bytes != 0 && bytes % (1ull << 10) == 0) return fmt::format("{}KB", bytes >> 10);
    return fmt::format("{}B", bytes);
}

std::vector<std::string> default_pr_command() {
    return {"gh",
            "pr",
            "create",
            "--head",
            "{branch}",
            "--base",
            "{base}",
            "--title",
            "{title}",
            "--body",
            "{body}"};
}

std::string default_board_yaml(std::string_view prefix) {
    // Kept in step with BoardConfig's defaults by the round-trip test in board_config_test.
    return fmt::format(R"(# board.yaml: how this board runs (spec: storage.md, agents.md).
# Every key is optional; the values below are the defaults. An unknown key is an error,
# so a typo cannot silently change what the agents do. Durations: 500ms, 10s, 5m, 1h
# (720h at most). Sizes: 512KB, 50MB, 1GB (1 KB = 1024 bytes).

# Ticket ids are PREFIX-N: an uppercase letter, then up to 15 uppercase letters or digits.
prefix: {}

# Which columns the agents take work from on their own. research: backlog tickets start
# research without a human; planning: ready tickets start planning without a human.
auto:
  research: true
  planning: false

# The most tickets each agent column holds at once (0 = unlimited).
wip:
  research: 3
  planning: 2
  implementing: 2

# What happens when a phase completes: none (advance at once), checkpoint or approval
# (wait for a human: approve advances, reject re-runs the phase with the feedback).
gates:
  research: none
  planning: approval

# Limits per ticket and phase before a human is asked to step in (awaiting escalation).
budget:
  max_iterations: 10  # runs of one phase that end without a signal
  max_attempts: 3     # failed runs (crash, non-zero exit, timeout) of one phase
  max_cost_usd: 10.0  # total agent cost of the ticket; 0 = unlimited
  retry_backoff: 10s       # wait before retrying a failed run; doubled per failure
  retry_backoff_max: 5m    # the longest such wait

# board-daemon: how many agents at once, and how it watches the board.
daemon:
  max_parallel: 2  # agent runs in flight across the board
  poll: 10s        # watch mode: how often the board is rescanned
  debounce: 2s     # wait before taking a ticket that just became available
  grace: 30s       # on SIGINT/SIGTERM: time running agents get before they are killed

# The agents. A command is an argv list (never a shell string); the prompt arrives on
# standard input, its path in BOARD_PROMPT_FILE. A phase without its own command, timeout
# or dialect uses the default's.
#
# The dialect (auto: by the program's name) adds what each agent CLI needs to finish a
# phase unattended, unless the command sets it already (docs/agents.md):
#   claude   -p --output-format stream-json --verbose --permission-mode acceptEdits
#            --add-dir <the run folder> --max-turns <max_steps> [--resume <session>]
#   codex    exec --json --skip-git-repo-check --sandbox workspace-write (danger-full-access
#            when Landlock confines it: Codex's own sandbox cannot run inside it)
#            --add-dir <the run folder> [resume <session>] -
#   gemini   --output-format stream-json --approval-mode auto_edit
#            --include-directories <the run folder>
#   generic  nothing: any program that prints <promise>SIGNAL</promise> as its last word
agents:
  default:
    command: [claude]      # Claude Code
    # command: [codex]     # Codex CLI
    # command: [gemini]    # Gemini CLI
    dialect: auto          # or claude, codex, gemini, generic
    # Landlock confinement: an agent writes only its run folder (where its artifact is
    # drafted), its worktree, its own tool state (~/.claude, ~/.codex...) and temp; it can
    # never write a log, board.yaml or .board/, nor read the HTTP token. auto: where the
    # kernel offers Landlock; landlock: always (else the daemon will not start); none: off.
    sandbox: auto
    timeout: 30m  # the run is terminated, then killed, after this long
    max_output: 50MB  # kept of a run's output in its log; the rest is dropped, with a note
  research:
    max_steps: 15
    worktree: false
    enabled: true
    resume: false  # true: continue the agent's last session of this ticket
    # command: [codex]  # this phase only, instead of the default's
    # timeout: 1h
    # max_output: 200MB
  planning:
    max_steps: 15
    worktree: false
    enabled: true
    resume: false
  implementing:
    max_steps: 30
    worktree: true  # run in git worktree board/<ID> on branch board/<ID>
    enabled: true
    resume: false
  review:
    max_steps: 10
    worktree: false
    enabled: true  # false: implementing goes straight to the human review
    resume: false

# What becomes of a ticket's branch (board/<ID>, where its implementing agent worked) once a
# person approves the ticket done. merge: merged into the base branch in this checkout (a
# conflict sends the ticket back to a person, named); pr: pushed, then offered with
# pr_command ({{branch}}, {{base}}, {{title}}, {{id}}, {{body}} are filled in; the address it
# prints is kept on the ticket); none: left as it is.
ship:
  policy: merge
  base: ""          # empty: the branch this checkout is on
  remote: origin    # pr: where the branch is pushed
  pr_command: [gh, pr, create, --head, "{{branch}}", --base, "{{base}}", --title, "{{title}}", --body, "{{body}}"]
  cleanup: true     # remove the worktree once shipped, and the branch once merged

# How long a person may keep each kind of request (work, approval, input, review, content,
# escalation, checkpoint) before the board reminds them (the notify command runs again, every
# remind_after) or escalates it to escalate_to as well (once). Both are recorded in the log.
# handoffs:
#   review: {{ remind_after: 24h, escalate_after: 72h, escalate_to: [carol] }}
#
# Who decides each kind: `board list --awaiting --for alice` lists what is hers (a kind with
# no one named is everyone's).
# reviewers:
#   review: [alice, bob]

# A command run whenever a ticket starts awaiting a person or an agent asks a question: an
# argv list, never a shell string. The details arrive in the environment (BOARD_TICKET,
# BOARD_AWAITING, BOARD_REASON, ...) and as one JSON object on standard input.
# notify:
#   command: [notify-send, board]
#   timeout: 10s       # the command is killed after this long
#   max_parallel: 4    # commands in flight; a notification beyond that is dropped
)",
                       prefix);
}

}  // namespace board

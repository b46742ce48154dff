#pragma once
// Agent dialects (spec/agents.md, "Dialects and confinement"): everything the board knows of
// one agent CLI, in one place. A dialect says
//
// - what it adds to the configured command for a run: the print/JSON mode, the permission
//   mode, the folders the phase may write besides its working directory, the step limit, the
//   session to resume, and environment that bounds the CLI's own retries;
// - how the output is read: the signal and questions come only from the agent's own final
//   message in its structured output, never from echoed input or from tool results; cost,
//   tokens and session where the CLI reports them; the agent's own error text and whether
//   retrying can fix it.
//
// `claude` (Claude Code), `codex` (Codex CLI), `gemini` (Gemini CLI) and `generic` (any
// program speaking the text protocol: the signal is read from what it prints, minus any part
// that repeats the prompt). Chosen by `dialect:` in board.yaml or by the program's file name.
// Adding a vendor: a row in the table of dialect.cpp and an OutputReader; docs/agents.md.

#include <board/ticket.hpp>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace board {

enum class DialectKind { claude, codex, gemini, generic };

/// `claude`, `codex`, `gemini`, `generic`.
std::string_view to_string(DialectKind kind);
/// The inverse of to_string; nullopt for anything else.
std::optional<DialectKind> parse_dialect(std::string_view name);

/// The dialect of a command when board.yaml names none: by argv[0]'s file name (`claude`,
/// `codex`, `gemini`, each also with an `.exe`/`.js` suffix or a `-cli` tail), else generic.
DialectKind dialect_of_command(const std::vector<std::string>& command);

/// What the daemon decided for one run, in the dialect's terms.
struct LaunchRequest {
    std::vector<std::string> command;  ///< board.yaml's argv, never empty
    Status phase = Status::research;
    /// Folders the phase may write besides its working directory: the run folder (where its
    /// artifact is drafted) for every phase. Absolute.
    std::vector<std::filesystem::path> writable;
    int max_steps = 15;
    std::string resume_session;  ///< non-empty: continue this session of the agent
    /// The board confines the agent itself (sandbox.hpp). A CLI's own sandbox cannot nest
    /// inside Landlock (it mounts), so the dialect then turns it off instead of asking for it.
    bool confined = false;
};

/// How to start the run.
struct LaunchPlan {
    std::vector<std::string> argv;
    /// Set for the child unless the daemon's own environment sets it already (a person's
    /// CLAUDE_CODE_MAX_RETRIES wins over the dialect's).
    std::vector<std::pair<std::string, std::string>> env_defaults;
};

/// Builds the run's argv: the configured command, then what the dialect adds. A flag the
/// command already has is not added again (a board that sets its own `--permission-mode` or
/// `--sandbox` keeps it).
LaunchPlan plan_launch(DialectKind kind, const LaunchRequest& request);

/// argv that prints the program's version: for the daemon's pre-flight check.
std::vector<std::string> version_command(DialectKind kind, const std::vector<std::string>& command);

struct TokenUsage {
    std::int64_t input = 0;
    std::int64_t output = 0;
    std::int64_t cache_read = 0;
    std::int64_t cache_write = 0;
    friend bool operator==(const TokenUsage&, const TokenUsage&) = default;
};

/// Whether retrying a failed run can help.
enum class Retry {
    helps,  ///< transient: a refused connection, 5xx, 429, a timeout; or not known
    futile  ///< permanent: a usage error, a refused credential (401/403), a missing program
};

/// What a run's output says, once it ended.
struct AgentReport {
    /// The text the signal and questions are read from: the agent's own final message (or,
    /// for `generic`, the lines of its output that can hold a tag, minus echoed prompt).
    std::string message;
    std::optional<double> cost_usd;
    TokenUsage tokens;
    std::string session;
    /// The agent's own last error, one line of at most 1000 bytes ("API Error: 401 ..."); empty
    /// when it reported none.
    std::string error;
    /// The run failed even though the process exited 0 (Claude Code's `is_error` result).
    bool failed_in_output = false;
    Retry retry = Retry::helps;
    /// Things about the output a person should know (unreadable JSON, a cut message).
    std::vector<std::string> warnings;
};

/// Reads one run's output as it arrives, in memory bounded whatever the agent prints.
class OutputReader {
public:
    virtual ~OutputReader() = default;
    /// One line of output without its `\n` (a very long line may come in pieces).
    virtual void line(std::string_view text) = 0;
    /// The report, given how the process ended. Call once, after the last line.
    virtual AgentReport finish(int exit_code) = 0;

    /// The last thing the agent said or did, one line of at most 200 bytes: for a live view.
    const std::string& progress() const { return progress_; }

    /// Non-empty once the output shows the run cannot succeed and the CLI will not stop by
    /// itself (Codex reconnecting without end to a model service that refuses connections):
    /// the daemon then stops the agent. Says why, one line.
    const std::string& hopeless() const { return hopeless_; }

protected:
    void show_progress(std::string_view text);

    void give_up(std::string why) {
        if (hopeless_.empty()) hopeless_ = std::move(why);
    }

private:
    std::string progress_;
    std::string hopeless_;
};

/// A reader for `kind`. `prompt` is the text the agent was given: `generic` drops any run of
/// output lines that repeats it.
std::unique_ptr<OutputReader> make_output_reader(DialectKind kind, std::string_view prompt);

/// Whether an error text describes a failure retrying cannot fix: a refused credential
/// (401/403, an invalid key), a usage error (an unknown option or argument), a missing
/// program. Everything else (connection refused, 5xx, 429, timeouts, unknown) is transient.
Retry classify_error(std::string_view error_text);

}  // namespace board

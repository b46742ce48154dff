#pragma once
// One agent run from start to end (spec/agents.md step 3): the prompt rendered and saved, the
// worktree made for implementing, the launch planned by the agent's dialect and confined, the
// agent run through an AgentLauncher, and what it left behind gathered into a RunRecord. The
// daemon appends the events (run_outcome.hpp decides which); this decides nothing about the
// ticket.

#include "orchestrator/agent_process.hpp"
#include "orchestrator/prompt.hpp"
#include "orchestrator/run_folder.hpp"
#include "orchestrator/run_outcome.hpp"
#include "orchestrator/settings_guard.hpp"

#include <board/board_config.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

namespace board::orchestrator {

/// One launched agent, as the daemon sees it: run it, stop it, see what it said last.
class AgentRun {
public:
    virtual ~AgentRun() = default;
    /// Runs the agent to its end (or until stopped), its output read by `spec.reader`.
    virtual boost::asio::awaitable<ProcessOutcome> run(LaunchSpec spec) = 0;
    /// Stops it: SIGTERM now, SIGKILL after `grace`. The outcome says `interrupted`.
    virtual void interrupt(std::chrono::milliseconds grace) = 0;
    virtual void kill_now() = 0;
    /// The last thing the agent said or did (for a live view).
    virtual const std::string& last_line() const = 0;
};

/// Where agents come from: processes for board-daemon (AgentProcess), a script in tests.
class AgentLauncher {
public:
    virtual ~AgentLauncher() = default;
    virtual std::shared_ptr<AgentRun> prepare(boost::asio::any_io_executor executor) = 0;
};

/// Launches each agent as a process of its own (agent_process.hpp), a confined one on
/// `launch_confined_on` (a LaunchingThread's) when given.
std::unique_ptr<AgentLauncher> process_launcher(
    boost::asio::any_io_executor launch_confined_on = {});

/// What every run of one daemon shares.
struct RunContext {
    std::filesystem::path board_root;
    const BoardConfig* config = nullptr;
    const PromptTemplates* templates = nullptr;
    std::filesystem::path repository_git_dir;  ///< the board's repository's `.git`, if any
    bool sandbox_ok = false;                   ///< the sandbox probe passed at start
    SharedConfinement confinement;             ///< what every confined run shares
    /// The tools' settings put back after every confined run; null: runs are not confined.
    std::shared_ptr<SettingsGuard> settings;
    /// Reading everything but the hidden files: the same ruleset for every run while the
    /// folders it was made from stay as they were.
    std::shared_ptr<KeptReadingRules> reading_rules;
    /// The shared writable places (confinement.rules.writable), held open for every run.
    std::shared_ptr<KeptWritingPlaces> writing_places;
    boost::asio::any_io_executor executor;
    /// Where its file work runs (disk_work.hpp); null: on the caller's thread.
    boost::asio::any_io_executor disk;

    /// Whether runs of `phase` are confined.
    bool confined(Status phase) const;

    /// Makes what every confined run of the board at `board_root` shares: its places, the
    /// kept rulesets' halves, the settings guard.
    void confine_runs();
};

/// A run whose `run-started` is on the log.
struct StartedRun {
    std::shared_ptr<AgentRun> agent;
    Status phase = Status::research;
    std::string run_id;
};

/// Whether a run of `phase` works in the ticket's worktree, on `board/<ID>`: implementing
/// (with `worktree` on), and the review of work done there, which reads and tests it.
bool works_in_worktree(Status phase, const BoardConfig& config, const Ticket& ticket);

/// A run made ready to launch: its folder and prompt written, its launch planned and (unless
/// it works in a worktree, made first) confined.
struct PreparedRun {
    LaunchSpec spec;
    std::string launch_error;  ///< why the agent cannot start; empty: it can
    bool launch_error_is_permanent = false;
    bool in_worktree = false;
    std::filesystem::path dir;   ///< the ticket's folder
    std::filesystem::path work;  ///< the agent's own folder in it
    std::string artifact_name;   ///< the phase's artifact file; empty: none
    /// A confined run in a worktree: the worktree and its git folder, whose links to the
    /// repository are put back after the run (restore_worktree_links).
    std::filesystem::path worktree;
    std::filesystem::path worktree_admin;
    /// A confined run's hold on the tools' settings as they were before it (put back after).
    std::shared_ptr<SettingsGuard::Run> settings_run;
    /// Where what it changed in them is kept for a person: in the board's private folder, as
    /// settings hold keys and a run folder is kept in git (`.board/settings-changed/<ID>-<run>`).
    std::filesystem::path settings_changed;
    std::uint64_t output_cap = 0;
    int max_questions = 0;
};

/// The file work before a run, for a disk thread (disk_work.hpp), on `ticket` as its
/// `run-started` commit left it.
PreparedRun prepare_run(const RunContext& context,
                        const std::string& id,
                        const Ticket& ticket,
                        Status phase,
                        const std::string& run_id);

/// Runs a prepared run's agent to its end (its worktree made first). nullopt: it was
/// interrupted (the daemon is stopping), and the caller records that. The record does not
/// hold the agent's work yet: take_run_work adds it.
boost::asio::awaitable<std::optional<RunRecord>> run_prepared(const RunContext& context,
                                                              std::string id,
                                                              StartedRun running,
                                                              PreparedRun& prepared);

/// After a confined run, ended or interrupted, for a disk thread: what the agent must not keep
/// put back (its worktree's links to the repository, its tool's settings). One line for each
/// thing put back; the run lets go of the settings.
std::vector<std::string> restore_after_run(PreparedRun& prepared);

/// The file work after a run, for a disk thread: restore_after_run (its lines become the
/// record's warnings), the draft taken as the ticket's artifact, the agent's notes read.
void take_run_work(RunRecord& record, PreparedRun& prepared);

/// prepare_run, run_prepared and take_run_work in turn, each file step on the disk threads.
boost::asio::awaitable<std::optional<RunRecord>> execute_run(const RunContext& context,
                                                             std::string id,
                                                             Ticket ticket,
                                                             StartedRun running);

}  // namespace board::orchestrator

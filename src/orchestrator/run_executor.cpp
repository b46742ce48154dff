#include "orchestrator/run_executor.hpp"

#include "orchestrator/disk_work.hpp"
#include "orchestrator/run_folder.hpp"
#include "support/files.hpp"
#include "support/unique_fd.hpp"

#include <board/agent_dialect.hpp>
#include <board/board_dir.hpp>
#include <board/sandbox.hpp>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>

namespace board::orchestrator {

namespace asio = boost::asio;
namespace fs = std::filesystem;

namespace {

class ProcessRun final : public AgentRun {
public:
    ProcessRun(boost::asio::any_io_executor executor,
               boost::asio::any_io_executor launch_confined_on)
        : process_(
              std::make_shared<AgentProcess>(std::move(executor), std::move(launch_confined_on))) {}

    boost::asio::awaitable<ProcessOutcome> run(LaunchSpec spec) override {
        return process_->run(std::move(spec));
    }

    void interrupt(std::chrono::milliseconds grace) override { process_->interrupt(grace); }

    void kill_now() override { process_->kill_now(); }

    const std::string& last_line() const override { return process_->last_line(); }

private:
    std::shared_ptr<AgentProcess> process_;
};

class ProcessLauncher final : public AgentLauncher {
public:
    explicit ProcessLauncher(boost::asio::any_io_executor launch_confined_on)
        : launch_confined_on_(std::move(launch_confined_on)) {}

    std::shared_ptr<AgentRun> prepare(boost::asio::any_io_executor executor) override {
        return std::make_shared<ProcessRun>(std::move(executor), launch_confined_on_);
    }

private:
    boost::asio::any_io_executor launch_confined_on_;
};

}  // namespace

std::unique_ptr<AgentLauncher> process_launcher(boost::asio::any_io_executor launch_confined_on) {
    return std::make_unique<ProcessLauncher>(std::move(launch_confined_on));
}

bool RunContext::confined(Status phase) const {
    return sandbox_ok && config->agent(phase)->sandbox != SandboxMode::none;
}

void RunContext::confine_runs() {
    confinement = shared_confinement(board_root);
    reading_rules = std::make_shared<KeptReadingRules>(confinement.rules.hidden);
    writing_places = std::make_shared<KeptWritingPlaces>(confinement.rules.writable);
    NamedProgramPlaces named;
    named.writable = confinement.rules.writable;
    named.hidden = confinement.rules.hidden;
    if (const char* home = std::getenv("HOME"); home && *home) named.home = home;
    for (const char* variable : {"CLAUDE_CONFIG_DIR", "CODEX_HOME"})
        if (const char* folder = std::getenv(variable); folder && *folder == '/')
            named.variables.emplace_back(variable, fs::path{folder}.lexically_normal());
    settings = std::make_shared<SettingsGuard>(confinement.guarded,
                                               settings_kept_file(board_root),
                                               confinement.guarded_members,
                                               std::move(named));
}

namespace {

/// Confines `prepared` for `cwd` (a disk call: paths resolved, the writing ruleset made);
/// sets its launch error when it cannot be.
void confine(const RunContext& context,
             PreparedRun& prepared,
             const fs::path& cwd,
             bool writes_cwd) {
    std::string problem;
    if (!find_program(prepared.spec, problem)) {
        prepared.launch_error = problem;
        prepared.launch_error_is_permanent = true;
        return;
    }
    fs::path admin;
    if (writes_cwd && !context.repository_git_dir.empty()) {
        // Links a run killed midway may have left rewritten are put back before this one.
        if (auto found = worktree_admin_dir(cwd, context.repository_git_dir)) {
            admin = *found;
            restore_worktree_links(cwd, admin);
            prepared.worktree = cwd;
            prepared.worktree_admin = admin;
        }
    }
    if (context.settings) {
        prepared.settings_run = std::make_shared<SettingsGuard::Run>(context.settings);
        prepared.settings_changed =
            context.board_root / ".board" / "settings-changed" /
            (prepared.dir.filename().string() + "-" + prepared.work.filename().string());
    }
    const Confinement rules =
        confinement_for(context.confinement,
                        {prepared.work, cwd, writes_cwd, context.repository_git_dir, admin},
                        prepared.spec);
    prepared.spec.reading_rules = context.reading_rules->current(problem);
    if (prepared.spec.reading_rules)
        prepared.spec.writing_rules =
            std::make_shared<UniqueFd>(context.writing_places->prepare(rules, problem));
    if (!prepared.spec.reading_rules || !*prepared.spec.writing_rules)
        prepared.launch_error = "cannot confine the agent: " + problem;
}

}  // namespace

bool works_in_worktree(Status phase, const BoardConfig& config, const Ticket& ticket) {
    return (phase == Status::implementing && config.agent(phase)->worktree) ||
           (phase == Status::review && !ticket.branch.empty());
}

PreparedRun prepare_run(const RunContext& context,
                        const std::string& id,
                        const Ticket& ticket,
                        Status phase,
                        const std::string& run_id) {
    const BoardConfig& config = *context.config;
    PreparedRun prepared;
    prepared.dir = context.board_root / "tickets" / id;
    const fs::path& dir = prepared.dir;
    const fs::path runs = dir / "runs";
    const std::string stem = run_file_stem(run_id, phase);
    const fs::path prompt_file = runs / (stem + ".prompt.md");
    prepared.artifact_name = artifact_file_name(phase);
    const AgentConfig& agent = *config.agent(phase);
    // The agent's own folder: where it drafts its artifact and leaves notes. The ticket
    // folder (its log above all) is the board's; the draft is moved in after the run.
    prepared.work = runs / stem;
    const fs::path draft = prepared.work / prepared.artifact_name;
    std::error_code ec;
    fs::create_directories(prepared.work, ec);
    if (!prepared.artifact_name.empty() && fs::exists(dir / prepared.artifact_name, ec))
        fs::copy_file(
            dir / prepared.artifact_name, draft, fs::copy_options::overwrite_existing, ec);
    PromptInput input;
    input.ticket = &ticket;
    input.phase = phase;
    input.ticket_dir = dir;
    input.artifact_path = draft;
    input.research_text = read_small_file(dir / "research.md");
    input.plan_text = read_small_file(dir / "plan.md");
    if (const auto kind = artifact_of(phase);
        kind && ticket.artifact(*kind) &&
        ticket.artifact(*kind)->status == ArtifactStatus::in_progress)
        input.unfinished_text = read_small_file(dir / prepared.artifact_name);
    const std::string prompt = render_prompt(context.templates->of(phase), input);
    prepared.launch_error = write_file_atomically(prompt_file, prompt, Durability::unsynced);

    prepared.in_worktree = works_in_worktree(phase, config, ticket);

    LaunchRequest request;
    request.command = agent.command;
    request.phase = phase;
    request.writable = {prepared.work};
    request.max_steps = agent.max_steps;
    if (agent.resume) request.resume_session = ticket.last_session;
    request.confined = context.confined(phase);
    LaunchPlan plan = plan_launch(agent.dialect, request);

    LaunchSpec& spec = prepared.spec;
    spec.argv = std::move(plan.argv);
    spec.reader = make_output_reader(agent.dialect, prompt);
    if (agent.dialect != DialectKind::generic) spec.max_line_bytes = 16u << 20;
    spec.env = {{"BOARD_TICKET", id},
                {"BOARD_PHASE", std::string{to_string(phase)}},
                {"BOARD_TICKET_DIR", dir.string()},
                {"BOARD_RUN", run_id},
                {"BOARD_RUN_DIR", prepared.work.string()},
                {"BOARD_PROMPT_FILE", prompt_file.string()},
                {"BOARD_ARTIFACT", draft.string()},
                {"BOARD_DIR", context.board_root.string()},
                {"BOARD_MAX_STEPS", std::to_string(agent.max_steps)}};
    if (!ticket.last_session.empty()) spec.env.emplace_back("BOARD_SESSION", ticket.last_session);
    for (auto& [key, value] : plan.env_defaults) {
        if (!std::getenv(key.c_str())) spec.env.emplace_back(std::move(key), std::move(value));
    }
    spec.cwd = context.board_root;
    spec.stdin_file = prompt_file;
    spec.log_file = runs / (stem + ".log");
    // Made here, on a disk thread, so that the launch on the io thread only opens it: making
    // a file can wait on the file system's allocator.
    if (prepared.launch_error.empty()) {
        const UniqueFd made{
            ::open(spec.log_file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)};
        if (!made) prepared.launch_error = spec.log_file.string() + ": " + std::strerror(errno);
    }
    spec.timeout = agent.timeout;
    spec.max_output = agent.max_output;
    spec.grace = config.daemon.grace;
    prepared.output_cap = agent.max_output;
    prepared.max_questions = agent.max_questions;
    // A run in a worktree is confined once the worktree is there (run_prepared).
    if (prepared.launch_error.empty() && !prepared.in_worktree && context.confined(phase))
        confine(context, prepared, context.board_root, false);
    return prepared;
}

asio::awaitable<std::optional<RunRecord>> run_prepared(const RunContext& context,
                                                       std::string id,
                                                       StartedRun running,
                                                       PreparedRun& prepared) {
    if (prepared.launch_error.empty() && prepared.in_worktree) {
        auto worktree = co_await ensure_worktree(
            context.executor, context.board_root, id, prepared.spec.log_file);
        if (worktree.index() == 1) {
            prepared.launch_error = std::get<1>(worktree);
        } else {
            prepared.spec.cwd = std::get<0>(worktree);
            if (context.confined(running.phase)) {
                const fs::path cwd = prepared.spec.cwd;
                co_await on_disk(context.disk, [&] { confine(context, prepared, cwd, true); });
            }
        }
    }

    ProcessOutcome outcome;
    if (prepared.launch_error.empty()) {
        outcome = co_await running.agent->run(std::move(prepared.spec));
    } else {
        outcome.launch_error = prepared.launch_error;
    }
    if (outcome.interrupted && outcome.launch_error.empty()) co_return std::nullopt;
    RunRecord record;
    record.run_id = running.run_id;
    record.phase = running.phase;
    record.exit_code = outcome.exit_code;
    record.timed_out = outcome.timed_out;
    if (!outcome.launch_error.empty()) {
        record.error = "could not start: " + outcome.launch_error;
        // A program that is not there, or cannot run, is not there on the next try.
        record.error_is_permanent =
            prepared.launch_error_is_permanent ||
            (outcome.exit_code == 0 && classify_error(outcome.launch_error) == Retry::futile);
    }
    record.duration_ms = outcome.duration.count();
    record.output = std::move(outcome.output);
    record.output_cap = prepared.output_cap;
    record.max_questions = prepared.max_questions;
    record.output_dropped = outcome.output_dropped;
    co_return record;
}

std::vector<std::string> restore_after_run(PreparedRun& prepared) {
    std::vector<std::string> lines;
    if (!prepared.worktree_admin.empty())
        lines = restore_worktree_links(prepared.worktree, prepared.worktree_admin);
    if (prepared.settings_run) {
        for (auto& line : prepared.settings_run->put_back(prepared.settings_changed))
            lines.push_back(std::move(line));
    }
    prepared.settings_run.reset();
    return lines;
}

void take_run_work(RunRecord& record, PreparedRun& prepared) {
    for (auto& line : restore_after_run(prepared))
        record.output.report.warnings.push_back(std::move(line));
    if (prepared.work.empty()) return;  // never prepared: there is no folder to take from
    take_agent_work(record, prepared.dir, prepared.work, prepared.artifact_name);
}

asio::awaitable<std::optional<RunRecord>> execute_run(const RunContext& context,
                                                      std::string id,
                                                      Ticket ticket,
                                                      StartedRun running) {
    auto prepared = co_await on_disk(context.disk, [&] {
        return prepare_run(context, id, ticket, running.phase, running.run_id);
    });
    auto record = co_await run_prepared(context, id, std::move(running), prepared);
    if (record) {
        co_await on_disk(context.disk, [&] { take_run_work(*record, prepared); });
    } else {
        co_await on_disk(context.disk, [&] { restore_after_run(prepared); });
    }
    co_return record;
}

}  // namespace board::orchestrator

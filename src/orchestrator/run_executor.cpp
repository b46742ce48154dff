#include "orchestrator/run_executor.hpp"

#include "orchestrator/disk_work.hpp"
#include "orchestrator/run_folder.hpp"
#include "support/files.hpp"
#include "support/unique_fd.hpp"

#include <board/agent_dialect.hpp>
#include <board/board_dir.hpp>
#include <board/sandbox.hpp>

#include <cstdlib>

namespace board::orchestrator {

namespace asio = boost::asio;
namespace fs = std::filesystem;

namespace {

class ProcessRun final : public AgentRun {
public:
    explicit ProcessRun(boost::asio::any_io_executor executor)
        : process_(std::make_shared<AgentProcess>(std::move(executor))) {}

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
    std::shared_ptr<AgentRun> prepare(boost::asio::any_io_executor executor) override {
        return std::make_shared<ProcessRun>(std::move(executor));
    }
};

}  // namespace

std::unique_ptr<AgentLauncher> process_launcher() {
    return std::make_unique<ProcessLauncher>();
}

bool RunContext::confined(Status phase) const {
    return sandbox_ok && config->agent(phase)->sandbox != SandboxMode::none;
}

asio::awaitable<std::optional<RunRecord>> execute_run(const RunContext& context,
                                                      std::string id,
                                                      Ticket ticket,
                                                      StartedRun running) {
    const BoardConfig& config = *context.config;
    const fs::path dir = context.board_root / "tickets" / id;
    const fs::path runs = dir / "runs";
    const std::string stem = run_file_stem(running.run_id, running.phase);
    const fs::path prompt_file = runs / (stem + ".prompt.md");
    const fs::path log_file = runs / (stem + ".log");
    const std::string artifact_name = artifact_file_name(running.phase);
    const AgentConfig& agent = *config.agent(running.phase);
    // The agent's own folder: where it drafts its artifact and leaves notes. The ticket
    // folder (its log above all) is the board's; the draft is moved in after the run.
    const fs::path work = runs / stem;
    const fs::path draft = work / artifact_name;
    std::string prompt;
    std::string launch_error = co_await on_disk(context.disk, [&] {
        std::error_code ec;
        fs::create_directories(work, ec);
        if (!artifact_name.empty() && fs::exists(dir / artifact_name, ec))
            fs::copy_file(dir / artifact_name, draft, fs::copy_options::overwrite_existing, ec);
        PromptInput input;
        input.ticket = &ticket;
        input.phase = running.phase;
        input.ticket_dir = dir;
        input.artifact_path = draft;
        input.research_text = read_small_file(dir / "research.md");
        input.plan_text = read_small_file(dir / "plan.md");
        if (const auto kind = artifact_of(running.phase);
            kind && ticket.artifact(*kind) &&
            ticket.artifact(*kind)->status == ArtifactStatus::in_progress)
            input.unfinished_text = read_small_file(dir / artifact_name);
        prompt = render_prompt(context.templates->of(running.phase), input);
        return write_file_atomically(prompt_file, prompt, Durability::unsynced);
    });

    fs::path cwd = context.board_root;
    bool writes_cwd = false;
    // Implementing works in the ticket's worktree; the review of that work reads (and tests)
    // the same branch there.
    const bool in_worktree = (running.phase == Status::implementing && agent.worktree) ||
                             (running.phase == Status::review && !ticket.branch.empty());
    if (launch_error.empty() && in_worktree) {
        auto worktree =
            co_await ensure_worktree(context.executor, context.board_root, id, log_file);
        if (worktree.index() == 1) {
            launch_error = std::get<1>(worktree);
        } else {
            cwd = std::get<0>(worktree);
            writes_cwd = true;
        }
    }

    LaunchRequest request;
    request.command = agent.command;
    request.phase = running.phase;
    request.writable = {work};
    request.max_steps = agent.max_steps;
    if (agent.resume) request.resume_session = ticket.last_session;
    request.confined = context.confined(running.phase);
    LaunchPlan plan = plan_launch(agent.dialect, request);

    LaunchSpec spec;
    spec.argv = std::move(plan.argv);
    spec.reader = make_output_reader(agent.dialect, prompt);
    if (agent.dialect != DialectKind::generic) spec.max_line_bytes = 16u << 20;
    spec.env = {{"BOARD_TICKET", id},
                {"BOARD_PHASE", std::string{to_string(running.phase)}},
                {"BOARD_TICKET_DIR", dir.string()},
                {"BOARD_RUN", running.run_id},
                {"BOARD_RUN_DIR", work.string()},
                {"BOARD_PROMPT_FILE", prompt_file.string()},
                {"BOARD_ARTIFACT", draft.string()},
                {"BOARD_DIR", context.board_root.string()},
                {"BOARD_MAX_STEPS", std::to_string(agent.max_steps)}};
    if (!ticket.last_session.empty()) spec.env.emplace_back("BOARD_SESSION", ticket.last_session);
    for (auto& [key, value] : plan.env_defaults) {
        if (!std::getenv(key.c_str())) spec.env.emplace_back(std::move(key), std::move(value));
    }
    spec.cwd = cwd;
    spec.stdin_file = prompt_file;
    spec.log_file = log_file;
    spec.timeout = agent.timeout;
    spec.max_output = agent.max_output;
    spec.grace = config.daemon.grace;
    bool launch_error_is_permanent = false;
    if (launch_error.empty() && context.confined(running.phase)) {
        launch_error = co_await on_disk(context.disk, [&] {
            std::string problem;
            if (!find_program(spec, problem)) {
                launch_error_is_permanent = true;
                return problem;
            }
            const Confinement rules = confinement_for(
                context.confinement, {work, cwd, writes_cwd, context.repository_git_dir}, spec);
            auto ruleset = std::make_shared<UniqueFd>(prepare_confinement(rules, problem));
            if (!*ruleset) return "cannot confine the agent: " + problem;
            spec.ruleset = std::move(ruleset);
            return std::string{};
        });
    }

    ProcessOutcome outcome;
    if (launch_error.empty()) {
        outcome = co_await running.agent->run(std::move(spec));
    } else {
        outcome.launch_error = launch_error;
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
            launch_error_is_permanent ||
            (outcome.exit_code == 0 && classify_error(outcome.launch_error) == Retry::futile);
    }
    record.duration_ms = outcome.duration.count();
    record.output = std::move(outcome.output);
    record.output_cap = agent.max_output;
    record.max_questions = agent.max_questions;
    record.output_dropped = outcome.output_dropped;
    co_await on_disk(context.disk, [&] { take_agent_work(record, dir, work, artifact_name); });
    co_return record;
}

}  // namespace board::orchestrator

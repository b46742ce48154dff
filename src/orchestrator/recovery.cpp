#include "orchestrator/recovery.hpp"

#include "orchestrator/run_folder.hpp"
#include "orchestrator/run_outcome.hpp"

#include <board/agent_dialect.hpp>
#include <board/agent_output.hpp>
#include <board/board_dir.hpp>
#include <board/event_log.hpp>

#include <fmt/format.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <unistd.h>

namespace board::orchestrator {

namespace fs = std::filesystem;

LeftoverRun resolve_leftover_run(const RunContext& context, const std::string& id, const Run& run) {
    const fs::path ticket_dir = context.board_root / "tickets" / id;
    const fs::path runs = ticket_dir / "runs";
    const std::string stem = run_file_stem(run.id, run.phase);
    // Read as the run's own dialect reads it, its saved prompt telling echo apart.
    const auto* agent = context.config->agent(run.phase);
    OutputCapture capture{
        make_output_reader(agent ? agent->dialect : DialectKind::generic,
                           read_small_file(runs / (stem + ".prompt.md"), 4u << 20))};
    std::ifstream saved(runs / (stem + ".log"), std::ios::binary);
    std::vector<char> chunk(64 * 1024);
    while (saved) {
        saved.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
        if (saved.gcount() <= 0) break;
        capture.feed({chunk.data(), static_cast<std::size_t>(saved.gcount())});
    }
    LeftoverRun left;
    RunRecord& record = left.record;
    record.run_id = run.id;
    record.phase = run.phase;
    record.output = capture.finish(0);
    // Taken whether or not the run ended: the daemon may have stopped after it replaced the
    // ticket's artifact with the draft and before the event that records it.
    take_agent_work(record, ticket_dir, fs::absolute(runs / stem), artifact_file_name(run.phase));
    left.ended = scan_signals(record.output.report.message).signal.has_value();
    if (!left.ended) return left;
    record.duration_ms = std::max<std::int64_t>(0, wall_clock_now() - run.started_at);
    record.recovered =
        "the daemon stopped while this run was in flight; its saved output ends with a signal, "
        "which is applied";
    return left;
}

namespace {

/// Whether `ticket_dir/runs` holds the folder or files of run `run` (`0001-research`, ...):
/// the run was started on this board, not merely named in someone's environment.
bool run_was_started(const fs::path& ticket_dir, const std::string& run) {
    std::error_code ec;
    for (fs::directory_iterator it(ticket_dir / "runs", ec), end; !ec && it != end;
         it.increment(ec)) {
        if (it->path().filename().string().starts_with(run + "-")) return true;
    }
    return false;
}

}  // namespace

void stop_leftover_processes(const RunContext& context,
                             const std::vector<AgentProcessFound>& found,
                             const std::function<void(const std::string&)>& say) {
    const fs::path tickets = context.board_root / "tickets";
    const pid_t own_group = ::getpgrp();
    const pid_t own_session = ::getsid(0);
    for (const auto& process : found) {
        const fs::path ticket_dir{process.ticket_dir};  // as the daemon set it: no trailing '/'
        // Compared as folders, so another board's agents are never taken for this one's.
        std::error_code same_ec;
        if (!fs::equivalent(ticket_dir.parent_path(), tickets, same_ec)) continue;
        if (process.pid == ::getpid() || !run_was_started(ticket_dir, process.run)) continue;
        // The whole group only when it is its session's own, as an agent's is (agents are
        // started with setsid): never a group a person's shell or another program leads, nor
        // the daemon's own (started from inside a run's environment).
        const pid_t group = ::getpgid(process.pid);
        const pid_t session = ::getsid(process.pid);
        // Alive after they were read: they are its own, not a later holder's of its number.
        const bool group_stopped = process.alive() && group > 1 && group == session &&
                                   group != own_group && session != own_session &&
                                   signal_group(group, SIGKILL);
        // Not said when it had gone already, or is not ours to stop.
        if (!process.signal(SIGKILL) && !group_stopped) continue;
        say(fmt::format("{}: stopped a process of run {} left by the last daemon (pid {})",
                        ticket_dir.filename().string(),
                        process.run,
                        process.pid));
    }
}

void recover_runs(const RunContext& context,
                  KnownTickets& known,
                  OwnWrites& writes,
                  const std::function<void(const std::string&)>& say) {
    stop_leftover_processes(context, processes_with_a_board_run(), say);
    for (auto& [id, entry] : known.all()) {
        if (!entry.ticket || !entry.ticket->run) continue;
        const Run run = *entry.ticket->run;
        auto left = resolve_leftover_run(context, id, run);
        const auto outcome = std::make_shared<const RunRecord>(std::move(left.record));
        if (left.ended) {
            if (!writes.commit(id, finishing(outcome, true)))
                writes.commit(id, finishing(outcome, false), {}, true, true);
            continue;
        }
        const std::string reason =
            "the daemon stopped while it was in flight (found at restart); the phase runs again";
        // Its artifact beside the interruption; if the reducer refuses the artifact, the
        // interruption alone, since the run must end.
        if (!writes.commit(id,
                           [&](const Ticket& t) { return interrupted_batch(t, *outcome, reason); }))
            writes.commit(id, [&](const Ticket&) {
                return std::vector<Authored>{
                    {Actor{ActorKind::system, {}}, RunInterrupted{run.id, reason}}};
            });
    }
}

}  // namespace board::orchestrator

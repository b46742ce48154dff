#pragma once
// What a person (or a log collector) sees of the daemon: one line per appended event, the
// problems it met, and on a terminal a status block redrawn in place (one line per running
// agent: ticket, phase, elapsed, last output line; tickets per column; who awaits a human; what
// the board holds back and why).

#include "orchestrator/daemon.hpp"
#include "orchestrator/run_executor.hpp"

#include <board/app.hpp>
#include <board/event.hpp>
#include <board/ticket.hpp>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace board::orchestrator {

/// A ticket the agent would take but the board holds back (WIP, a blocker, a backoff).
struct HeldTicket {
    std::string id;
    app::Standing standing;
};

struct BoardSnapshot {
    std::vector<std::shared_ptr<const Ticket>> tickets;
    std::vector<HeldTicket> held;
};

class Reporter {
public:
    explicit Reporter(DaemonOptions::Output output);
    ~Reporter();
    Reporter(const Reporter&) = delete;
    Reporter& operator=(const Reporter&) = delete;

    void event(const std::string& ticket, const Event& e);
    void message(std::string_view text);  ///< progress: stdout (a JSON object in json mode)
    void problem(std::string_view text);  ///< what went wrong: stderr
    void running(const std::string& ticket,
                 Status phase,
                 const std::string& run,
                 std::shared_ptr<AgentRun> process);
    void stopped(const std::string& ticket);
    void board(const BoardSnapshot& snapshot);
    /// Redraws the live block (elapsed times, last lines); a no-op in other modes.
    void tick();
    /// At exit: tickets per column, who awaits a human, and what to type next.
    void summary(const BoardSnapshot& snapshot);

    bool live() const { return output_ == DaemonOptions::Output::live; }

private:
    struct Agent {
        Status phase = Status::research;
        std::string run;
        std::chrono::steady_clock::time_point started;
        std::shared_ptr<AgentRun> process;
    };

    void clear_block();
    void draw_block();
    void line(std::string_view text);

    DaemonOptions::Output output_;
    std::map<std::string, Agent> agents_;
    BoardSnapshot board_;
    int block_lines_ = 0;
};

/// One readable line for an event: `PROJ-3 #5 run-started research run 0003 (attempt 1)`.
std::string describe_event(const std::string& ticket, const Event& e);

}  // namespace board::orchestrator

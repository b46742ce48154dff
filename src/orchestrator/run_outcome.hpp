#pragma once
// From what a run left behind to the events that record it (spec/agents.md step 4). Pure:
// the caller reads the artifact file and captures the output; this decides what to append.

#include "orchestrator/output_capture.hpp"

#include <board/app.hpp>
#include <board/artifact.hpp>
#include <board/event.hpp>
#include <board/ticket.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace board::orchestrator {

/// What one finished run left behind.
struct RunRecord {
    std::string run_id;
    Status phase = Status::research;
    int exit_code = 0;
    bool timed_out = false;
    std::string error;                ///< the run failed outside the agent (could not start, ...)
    bool error_is_permanent = false;  ///< `error` cannot go away by retrying
    std::int64_t duration_ms = 0;
    CapturedOutput output;
    std::string artifact_path;             ///< relative to the ticket folder, e.g. `plan.md`
    std::optional<ArtifactRead> artifact;  ///< absent: the agent wrote none
    std::string artifact_error;            ///< the file exists but could not be read
    std::string recovered;  ///< non-empty: resolved at a restart; says how (a system note)
    std::vector<std::string> agent_notes;  ///< left by `board note` during the run
};

/// An event payload and who it is by: the agent for what it wrote or asked, the board for the
/// rest.
using Authored = app::Authored;

/// The batch that records `record` on `ticket` (the ticket as it is now, its run in flight):
/// notes on what the board noticed (several signals, malformed tags or questions, bad front
/// matter), the artifact when it is new or changed, the questions asked (a run that failed
/// asks none: it is retried), and last `run-finished` with the one signal that counts.
std::vector<Authored> outcome_batch(const Ticket& ticket, const RunRecord& record);

/// What ends a run, built from the ticket as it is when written: the whole outcome batch, or
/// (`whole` false, after the reducer refused the whole: a question or artifact it would not
/// take) only its last event, `run-finished`, since the run must end or the ticket would wait
/// for it forever.
app::Author finishing(std::shared_ptr<const RunRecord> record, bool whole);

}  // namespace board::orchestrator

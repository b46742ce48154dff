#pragma once
// From what a run left behind to the events that record it (spec/agents.md step 4). Pure:
// the caller reads the artifact file and captures the output; this decides what to append.

#include "orchestrator/output_capture.hpp"

#include <board/app.hpp>
#include <board/artifact.hpp>
#include <board/event.hpp>
#include <board/ticket.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace board::orchestrator {

/// The most an agent may put in one field of an event (docs/semantics.md). Past it the text
/// is cut at a character boundary and marked `…[cut]`, and a note on the ticket says what was
/// cut: far above what a useful summary, question or error needs, and far below the log's
/// line limit however many fields an event has.
struct AgentTextLimits {
    static constexpr std::size_t summary = 4u << 10;   ///< an artifact's `summary:`
    static constexpr std::size_t context = 16u << 10;  ///< run-finished `context`
    static constexpr std::size_t error = 4u << 10;     ///< run-finished `error`
    static constexpr std::size_t session = 256;        ///< run-finished `session`
    static constexpr std::size_t question = 8u << 10;  ///< a question's text and its context
    /// Each of an option's id, label, value and description, and a default response.
    static constexpr std::size_t option = 1u << 10;
    static constexpr std::size_t options = 50;      ///< options per question; the rest dropped
    static constexpr std::size_t note = 16u << 10;  ///< a note left with `board note`
};

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
    std::uint64_t output_cap = 0;          ///< the run's max_output
    int max_questions = 0;                 ///< questions kept from one run; 0: any number
    std::uint64_t output_dropped = 0;      ///< output bytes past the cap, not in the run's log
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

/// A run that ended without an outcome (the daemon stopped while it was in flight): the
/// artifact it left when new or changed (the ticket's file already holds it), then
/// `run-interrupted` with `reason`.
/// A run the daemon's stop interrupted: a note for each thing put back after it, then
/// `run-interrupted`.
std::vector<Authored> stopped_batch(const std::string& run_id,
                                    const std::vector<std::string>& put_back);

std::vector<Authored> interrupted_batch(const Ticket& ticket,
                                        const RunRecord& record,
                                        std::string reason);

/// What ends a run, built from the ticket as it is when written: the whole outcome batch, or
/// (`whole` false, after the reducer refused the whole: a question or artifact it would not
/// take) only its last event, `run-finished`, since the run must end or the ticket would wait
/// for it forever.
app::Author finishing(std::shared_ptr<const RunRecord> record, bool whole);

}  // namespace board::orchestrator

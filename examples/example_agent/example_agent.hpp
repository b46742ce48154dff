#pragma once
// The pure part of `board-example-agent` (see README.md beside this file): reading the rendered
// prompt, finding the ticket's `example-agent:` directives, deciding what this run does and
// rendering the artifact. No I/O, no clock, no environment: main.cpp does those, so everything
// here is tested as plain functions (example_agent_test.cpp).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace board::example_agent {

enum class Phase { research, planning, implementing, review };

/// `research`, `planning`, `implementing`, `review`; anything else is no phase.
std::optional<Phase> phase_from_name(std::string_view name);
std::string_view phase_name(Phase phase);

/// One `example-agent: <phase> <action>` line of the ticket (the grammar is in README.md).
struct Directive {
    enum class Kind { signal, question, fail };
    Phase phase = Phase::research;
    Kind kind = Kind::signal;
    std::string signal;         ///< Kind::signal: the name, e.g. `INPUT_NEEDED`
    std::string context;        ///< Kind::signal: the text after `NAME:`, trimmed; may be empty
    std::string question_json;  ///< Kind::question: the JSON object, as written
    /// What follows `example-agent:`, trimmed. It identifies the directive: the artifact
    /// records it once carried out, and identical lines count once.
    std::string text;

    friend bool operator==(const Directive&, const Directive&) = default;
};

struct DirectiveScan {
    std::vector<Directive> directives;  ///< every phase's, in prompt order, duplicates dropped
    std::vector<std::string> warnings;  ///< one per unreadable directive, naming its line
};

/// Every line of `prompt` whose text starts (after blanks) with `example-agent:`.
/// Unreadable directives are skipped with a warning, never an error: a typo in a ticket must
/// not stop the demo.
DirectiveScan find_directives(std::string_view prompt);

/// The prompt's `## Human feedback` section: `(none)` or one `- ` bullet per human note.
struct Feedback {
    bool section_found = false;
    std::vector<std::string> notes;  ///< a note's continuation lines are joined with `\n`

    bool given() const { return !notes.empty(); }
};

Feedback read_feedback(std::string_view prompt);

/// What the prompt says about the ticket, for rendering.
struct TicketText {
    std::string title;        ///< from the prompt's `ticket ID: "title"` line, else the id
    std::string description;  ///< the `## The ticket` section, directive lines removed
    std::vector<std::string> plan_steps;  ///< the numbered lines of the `## The plan` section
};

TicketText read_ticket(std::string_view prompt, std::string_view ticket_id);

/// The directives (their `text`) an earlier run of this phase recorded as carried out in the
/// artifact it wrote, so a handoff a human approved without a note is not repeated forever.
std::vector<std::string> scenario_steps_done(std::string_view artifact);

/// True unless the question's JSON says `"type":"non_blocking"`: an absent type reads as
/// blocking (spec/state-machine.md §6), and a blocking question holds the ticket.
bool question_holds_ticket(std::string_view question_json);

enum class ArtifactStatus { complete, in_progress };

/// What one run does.
struct RunDecision {
    /// The directives of this phase carried out now, in order (a `fail` is always last).
    std::vector<Directive> carried_out;
    bool fail = false;           ///< exit 1 without writing the artifact
    bool print_complete = true;  ///< end with `<promise>COMPLETE</promise>`
    ArtifactStatus status = ArtifactStatus::complete;
    std::string why;  ///< one line for the narration
};

/// The rule of the demo: a directive applies only while the prompt has no human feedback and
/// the phase's current artifact does not record it as done; otherwise the phase completes.
RunDecision decide_run(Phase phase,
                       const std::vector<Directive>& directives,
                       const Feedback& feedback,
                       const std::vector<std::string>& done_before);

/// What the artifact is rendered from.
struct ArtifactInput {
    Phase phase = Phase::research;
    std::string ticket_id;
    std::string run;  ///< BOARD_RUN; may be empty
    TicketText ticket;
    Feedback feedback;
    RunDecision decision;
};

/// The Markdown artifact with front matter (`status`, `summary`).
std::string render_artifact(const ArtifactInput& input);

/// `<promise>NAME</promise>` or `<promise>NAME: context</promise>`.
std::string promise_tag(std::string_view signal, std::string_view context);

/// Text from the ticket made safe to echo on stdout: valid UTF-8, one line, and no `<` that
/// could open a `<promise>` or `<question>` tag the daemon would obey.
std::string inert(std::string_view text);

}  // namespace board::example_agent

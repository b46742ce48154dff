#pragma once
// Phase prompts (spec/agents.md step 2): a template per agent phase, the board's own
// `prompts/<phase>.md` first, else the one shipped in the binary (built from the repo's
// `prompts/`), rendered with the ticket. Rendering is pure: the caller reads the earlier
// artifacts and saves the result.

#include <board/ticket.hpp>

#include <array>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace board::orchestrator {

/// The placeholders a template may use; any other `{word.word}` is an error.
inline constexpr std::array known_placeholders{std::string_view{"ticket.id"},
                                               std::string_view{"ticket.title"},
                                               std::string_view{"ticket.intent"},
                                               std::string_view{"ticket.type"},
                                               std::string_view{"ticket.priority"},
                                               std::string_view{"ticket.dir"},
                                               std::string_view{"artifact.path"},
                                               std::string_view{"artifact.unfinished"},
                                               std::string_view{"artifact.research"},
                                               std::string_view{"artifact.plan"},
                                               std::string_view{"notes"},
                                               std::string_view{"feedback"},
                                               std::string_view{"protocol"}};

/// The template shipped for an agent phase (empty for other statuses).
std::string_view shipped_prompt(Status phase);

/// One template per agent phase, indexed by the phase's position in all_statuses.
struct PromptTemplates {
    std::array<std::string, all_statuses.size()> text;
    std::array<std::string, all_statuses.size()> source;  ///< a path, or `shipped`

    const std::string& of(Status phase) const { return text[static_cast<std::size_t>(phase)]; }
};

/// Loads the templates of `board_root`: `prompts/<phase>.md` there, else the shipped one.
/// Fails with one message naming the file and the placeholder when a template names an
/// unknown placeholder or cannot be read: a board with a broken prompt must not start.
std::variant<PromptTemplates, std::string> load_prompt_templates(
    const std::filesystem::path& board_root);

/// The first unknown placeholder in `text` with its line, e.g. `line 4: unknown placeholder
/// {ticket.name}`, or nullopt when every placeholder is known.
std::optional<std::string> check_placeholders(std::string_view text);

/// What a prompt is rendered from.
struct PromptInput {
    const Ticket* ticket = nullptr;
    Status phase = Status::research;
    std::filesystem::path ticket_dir;
    std::filesystem::path artifact_path;
    std::string research_text;  ///< the research artifact's content, or empty
    std::string plan_text;      ///< the plan artifact's content, or empty
    /// The phase's own artifact when the ticket records it `in-progress` (a run that ran out
    /// of time, was interrupted, or asked for another run): its content, else empty.
    std::string unfinished_text;
};

std::string render_prompt(std::string_view template_text, const PromptInput& input);

/// `## Human feedback` and one bullet per human note since the last run ended, or `(none)`.
std::string feedback_section(const Ticket& ticket);

/// The signal protocol for a phase: which signals exist, what each does, one per run, and
/// how to ask a structured question.
std::string protocol_section(Status phase);

}  // namespace board::orchestrator

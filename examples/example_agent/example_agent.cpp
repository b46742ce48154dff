// The pure part of the example agent: prompt in, decision and artifact text out.

#include "example_agent.hpp"

#include "support/utf8.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstddef>
#include <iterator>

namespace board::example_agent {
namespace {

constexpr std::string_view directive_prefix = "example-agent:";
constexpr std::string_view feedback_heading = "## Human feedback";
/// How the artifact records a directive it carried out (read back by scenario_steps_done).
constexpr std::string_view scenario_step_prefix = "- Scenario step done: `";

/// The `## ` headings of the shipped prompt templates (prompts/*.md). A section the agent
/// reads (the ticket, the plan) ends at the next of these, not at any `## `, because the
/// verbatim ticket text and artifacts in it have headings of their own.
constexpr std::array<std::string_view, 7> template_headings = {"The ticket",
                                                               "The plan",
                                                               "Research",
                                                               "Notes so far",
                                                               "Human feedback",
                                                               "What to produce",
                                                               "When you finish"};

constexpr std::array<std::string_view, 10> signal_names = {"COMPLETE",
                                                           "APPROVAL_NEEDED",
                                                           "REVIEW_REQUESTED",
                                                           "CONTENT_REVIEW",
                                                           "INPUT_NEEDED",
                                                           "BLOCKED",
                                                           "ESCALATE",
                                                           "CHECKPOINT",
                                                           "EJECT",
                                                           "CONTENT REVIEW"};

/// Handoffs that mean the phase's work is not finished yet, so the artifact is a draft.
/// (APPROVAL_NEEDED, REVIEW_REQUESTED and CONTENT_REVIEW hand over finished work.)
constexpr std::array<std::string_view, 5> unfinished_work_signals = {
    "INPUT_NEEDED", "BLOCKED", "ESCALATE", "CHECKPOINT", "EJECT"};

constexpr std::size_t max_sentences = 8;
constexpr std::size_t max_sentence_bytes = 240;
constexpr std::size_t max_summary_bytes = 160;

bool is_blank(char c) {
    return c == ' ' || c == '\t' || c == '\r';
}

std::string_view trim(std::string_view text) {
    while (!text.empty() && (is_blank(text.front()) || text.front() == '\n')) {
        text.remove_prefix(1);
    }
    while (!text.empty() && (is_blank(text.back()) || text.back() == '\n')) text.remove_suffix(1);
    return text;
}

template <std::size_t N>
bool contains(const std::array<std::string_view, N>& list, std::string_view word) {
    return std::find(list.begin(), list.end(), word) != list.end();
}

/// The lines of `text` without their `\n` (nor a trailing `\r`).
std::vector<std::string_view> split_lines(std::string_view text) {
    std::vector<std::string_view> lines;
    while (!text.empty()) {
        const auto end = text.find('\n');
        auto line = text.substr(0, end);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        lines.push_back(line);
        if (end == std::string_view::npos) break;
        text.remove_prefix(end + 1);
    }
    return lines;
}

/// `text` (valid UTF-8) cut at a code point boundary to at most `max_bytes`, with `…` when cut.
std::string shorten(std::string text, std::size_t max_bytes) {
    if (text.size() <= max_bytes) return text;
    std::size_t cut = max_bytes;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0U) == 0x80U) --cut;
    text.resize(cut);
    text += "…";
    return text;
}

/// `text` on one line: line breaks and tabs become spaces, runs of spaces one.
std::string one_line(std::string_view text) {
    std::string out;
    for (const char c : trim(text)) {
        const char plain = (c == '\n' || c == '\r' || c == '\t') ? ' ' : c;
        if (plain == ' ' && !out.empty() && out.back() == ' ') continue;
        out += plain;
    }
    return out;
}

bool is_template_heading(std::string_view line) {
    if (line.substr(0, 3) != "## ") return false;
    const auto name = trim(line.substr(3));
    return std::any_of(
        template_headings.begin(), template_headings.end(), [&](std::string_view heading) {
            return name.substr(0, heading.size()) == heading &&
                   (name.size() == heading.size() || name[heading.size()] == ' ');
        });
}

/// The lines of the prompt section under `## <name>`, up to the next template heading (or,
/// in a template that has none after it, the next `## ` line).
std::vector<std::string_view> section(const std::vector<std::string_view>& lines,
                                      std::string_view name) {
    const std::string heading = "## " + std::string{name};
    const auto start = std::find_if(
        lines.begin(), lines.end(), [&](std::string_view line) { return trim(line) == heading; });
    if (start == lines.end()) return {};
    auto end = std::find_if(std::next(start), lines.end(), is_template_heading);
    if (end == lines.end()) {
        end = std::find_if(std::next(start), lines.end(), [](std::string_view line) {
            return line.substr(0, 3) == "## ";
        });
    }
    return {std::next(start), end};
}

bool is_directive_line(std::string_view line) {
    return trim(line).substr(0, directive_prefix.size()) == directive_prefix;
}

/// One directive from the text after `example-agent:`, or the reason it cannot be read.
struct ParsedDirective {
    std::optional<Directive> directive;
    std::string problem;
};

ParsedDirective parse_directive(std::string_view text) {
    Directive directive;
    directive.text = std::string{text};
    const auto phase_end = text.find_first_of(" \t");
    const auto phase_word = text.substr(0, phase_end);
    const auto phase = phase_from_name(phase_word);
    if (!phase) {
        return {std::nullopt,
                "\"" + std::string{phase_word} +
                    "\" is not a phase (research, planning, implementing, review)"};
    }
    directive.phase = *phase;
    const auto action =
        phase_end == std::string_view::npos ? std::string_view{} : trim(text.substr(phase_end));
    if (action.empty()) return {std::nullopt, "no action after the phase"};

    if (action == "fail") {
        directive.kind = Directive::Kind::fail;
        return {directive, {}};
    }
    constexpr std::string_view question_word = "question";
    if (action.substr(0, question_word.size()) == question_word &&
        (action.size() == question_word.size() || is_blank(action[question_word.size()]))) {
        const auto json = trim(action.substr(question_word.size()));
        if (json.empty() || json.front() != '{' || json.back() != '}') {
            return {std::nullopt, "a question needs a JSON object: question {\"question\": ...}"};
        }
        if (json.find("</question>") != std::string_view::npos) {
            return {std::nullopt, "the question's JSON may not contain a closing question tag"};
        }
        directive.kind = Directive::Kind::question;
        directive.question_json = std::string{json};
        return {directive, {}};
    }

    const auto colon = action.find(':');
    const auto name = trim(action.substr(0, colon));
    if (!contains(signal_names, name)) {
        return {std::nullopt,
                "\"" + std::string{name} +
                    "\" is not an action: expected fail, question {json} or a signal "
                    "(COMPLETE, APPROVAL_NEEDED, REVIEW_REQUESTED, CONTENT_REVIEW, INPUT_NEEDED, "
                    "BLOCKED, ESCALATE, CHECKPOINT, EJECT)"};
    }
    directive.kind = Directive::Kind::signal;
    directive.signal = name == "CONTENT REVIEW" ? "CONTENT_REVIEW" : std::string{name};
    if (colon != std::string_view::npos) directive.context = trim(action.substr(colon + 1));
    if (directive.context.find("promise>") != std::string::npos) {
        return {std::nullopt, "a signal's context may not contain a promise tag"};
    }
    return {directive, {}};
}

/// The sentences of `text`, list markers and quote marks dropped, at most `max_sentences`.
std::vector<std::string> sentences(std::string_view text) {
    std::vector<std::string> out;
    for (auto line : split_lines(text)) {
        line = trim(line);
        while (!line.empty() && (line.front() == '>' || line.front() == '#')) {
            line = trim(line.substr(1));
        }
        if (line.substr(0, 2) == "- " || line.substr(0, 2) == "* " || line.substr(0, 2) == "+ ") {
            line = trim(line.substr(2));
        }
        const auto digits = line.find_first_not_of("0123456789");
        if (digits != std::string_view::npos && digits > 0 && line.substr(digits, 2) == ". ") {
            line = trim(line.substr(digits + 2));
        }
        std::size_t begin = 0;
        for (std::size_t i = 0; i < line.size(); ++i) {
            const char c = line[i];
            const bool ends = (c == '.' || c == '?' || c == '!') &&
                              (i + 1 == line.size() || is_blank(line[i + 1]));
            if (!ends && i + 1 != line.size()) continue;
            const auto piece = trim(line.substr(begin, i + 1 - begin));
            if (!piece.empty()) out.push_back(shorten(repair_utf8(piece), max_sentence_bytes));
            if (out.size() == max_sentences) return out;
            begin = i + 1;
        }
    }
    return out;
}

bool is_question(std::string_view sentence) {
    return !sentence.empty() && sentence.back() == '?';
}

/// Words of `text` that look like code: `backticked` spans, paths, file names, identifiers
/// with `_` or `::`. They name where the work probably lives.
std::vector<std::string> code_terms(std::string_view text) {
    std::vector<std::string> terms;
    const auto add = [&](std::string_view term) {
        term = trim(term);
        if (term.empty() || terms.size() == 6) return;
        const std::string value = shorten(repair_utf8(term), 80);
        if (std::find(terms.begin(), terms.end(), value) == terms.end()) terms.push_back(value);
    };
    std::size_t pos = 0;
    while ((pos = text.find('`', pos)) != std::string_view::npos) {
        const auto end = text.find('`', pos + 1);
        if (end == std::string_view::npos) break;
        add(text.substr(pos + 1, end - pos - 1));
        pos = end + 1;
    }
    std::size_t word_begin = 0;
    for (std::size_t i = 0; i <= text.size(); ++i) {
        if (i < text.size() && !is_blank(text[i]) && text[i] != '\n') continue;
        auto word = text.substr(word_begin, i - word_begin);
        word_begin = i + 1;
        while (!word.empty() &&
               std::string_view{"`\"'(),;:.!?"}.find(word.back()) != std::string_view::npos) {
            word.remove_suffix(1);
        }
        while (!word.empty() &&
               std::string_view{"`\"'(["}.find(word.front()) != std::string_view::npos) {
            word.remove_prefix(1);
        }
        if (word.find('`') != std::string_view::npos) continue;  // taken whole above
        const auto dot = word.find('.');
        const bool file_like = dot != std::string_view::npos && dot > 0 && dot + 1 < word.size() &&
                               std::isalpha(static_cast<unsigned char>(word[dot + 1])) != 0;
        if (word.find('/') != std::string_view::npos || word.find('_') != std::string_view::npos ||
            word.find("::") != std::string_view::npos || file_like) {
            add(word);
        }
    }
    return terms;
}

/// A YAML double-quoted scalar: always valid YAML, whatever the ticket's title holds.
std::string yaml_quoted(std::string_view text) {
    std::string out = "\"";
    for (const char c : text) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out + "\"";
}

std::string quoted_block(std::string_view text) {
    std::string out;
    for (const auto line : split_lines(text)) {
        out += line.empty() ? ">" : "> " + repair_utf8(line);
        out += '\n';
    }
    return out;
}

std::string numbered(const std::vector<std::string>& items) {
    std::string out;
    for (std::size_t i = 0; i < items.size(); ++i) {
        out += std::to_string(i + 1) + ". " + items[i] + "\n";
    }
    return out;
}

std::string bullets(const std::vector<std::string>& items) {
    std::string out;
    for (const auto& item : items) out += "- " + item + "\n";
    return out;
}

std::string plural(std::size_t count, std::string_view one, std::string_view many) {
    return std::to_string(count) + " " + std::string{count == 1 ? one : many};
}

/// The steps the plan gives for this ticket: the ones in the prompt when a plan is there
/// (implementing, review), else derived from the description (planning).
std::vector<std::string> plan_steps_for(const TicketText& ticket) {
    if (!ticket.plan_steps.empty()) return ticket.plan_steps;
    std::vector<std::string> steps;
    steps.push_back("Re-read the research note and confirm the goal: " + ticket.title + ".");
    for (const auto& sentence : sentences(ticket.description)) {
        if (is_question(sentence)) continue;
        steps.push_back("Make this true, with a test that shows it: " + sentence);
        if (steps.size() == 6) break;
    }
    steps.push_back("Add tests that fail before the change and pass after it.");
    steps.push_back("Update the docs that describe what changed.");
    return steps;
}

/// A phase's artifact without the parts every phase shares.
struct Rendered {
    std::string heading;  ///< the `# ` line
    std::string summary;  ///< the front matter's one line
    std::string body;     ///< the `## ` sections
};

Rendered render_research(const ArtifactInput& in) {
    const auto said = sentences(in.ticket.description);
    std::vector<std::string> findings;
    std::vector<std::string> questions;
    for (const auto& sentence : said) {
        if (is_question(sentence)) {
            questions.push_back(sentence);
        } else {
            findings.push_back("The ticket says: " + sentence);
        }
    }
    for (const auto& directive : in.decision.carried_out) {
        if (directive.kind == Directive::Kind::signal && !directive.context.empty() &&
            directive.signal != "COMPLETE") {
            questions.push_back(repair_utf8(one_line(directive.context)) + " (handed to a human)");
        }
        if (directive.kind == Directive::Kind::question) {
            questions.push_back("Asked as a structured question; see the ticket's questions.");
        }
    }
    const auto terms = code_terms(in.ticket.title + "\n" + in.ticket.description);
    if (!terms.empty()) {
        std::string where = "Where it probably lives: ";
        for (std::size_t i = 0; i < terms.size(); ++i) {
            where += (i == 0 ? "`" : ", `") + terms[i] + "`";
        }
        findings.push_back(where + " (named in the ticket).");
    }
    if (findings.empty()) {
        findings.push_back("The ticket has no description beyond its title: \"" + in.ticket.title +
                           "\".");
    }

    std::string body;
    body += "## The problem, as the ticket states it\n\n";
    body += in.ticket.description.empty() ? "> " + in.ticket.title + "\n"
                                          : quoted_block(in.ticket.description);
    body += "\n## Findings\n\n" + numbered(findings);
    body += "\n## Open questions\n\n";
    body += questions.empty() ? "- None in the ticket's text. A real agent would list what the "
                                "code leaves unclear.\n"
                              : bullets(questions);
    body += "\n## Risks\n\n";
    body +=
        terms.empty()
            ? "- The ticket names no file or function, so the first step is finding where the "
              "change belongs.\n"
            : "- The change touches what the ticket names; anything else that uses it may break.\n";
    body +=
        "- Nothing here was checked against the code: each finding restates the ticket, it is "
        "not evidence.\n";
    body += "\n## How a change could be tested\n\n";
    body += "- A test that fails today and passes once this is done: " + in.ticket.title + ".\n";

    return {"Research: " + in.ticket.title,
            "Example research on " + in.ticket.title + " - " +
                plural(findings.size(), "finding", "findings") + ", " +
                plural(questions.size(), "open question", "open questions"),
            body};
}

Rendered render_plan(const ArtifactInput& in) {
    const auto steps = plan_steps_for(in.ticket);
    const auto terms = code_terms(in.ticket.title + "\n" + in.ticket.description);
    std::vector<std::string> decisions;
    for (const auto& sentence : sentences(in.ticket.description)) {
        if (is_question(sentence)) decisions.push_back(sentence);
    }

    std::string body;
    body += "## Steps\n\nEach step is one commit.\n\n" + numbered(steps);
    body += "\n## Files\n\n";
    if (terms.empty()) {
        body += "- The ticket names none; step 1 finds them.\n";
    } else {
        for (const auto& term : terms) body += "- `" + term + "`\n";
    }
    body += "\n## Out of scope\n\n- Anything the ticket does not ask for.\n";
    body += "\n## Decisions for a human\n\n";
    body += decisions.empty() ? "- None: the ticket's text is enough for this plan.\n"
                              : bullets(decisions);
    return {"Plan: " + in.ticket.title,
            "Example plan for " + in.ticket.title + " in " + plural(steps.size(), "step", "steps"),
            body};
}

Rendered render_implementation_log(const ArtifactInput& in) {
    const auto steps = plan_steps_for(in.ticket);
    std::string body;
    body += "## Steps\n\n";
    for (std::size_t i = 0; i < steps.size(); ++i) {
        body += std::to_string(i + 1) + ". " + steps[i] +
                "\n   Walked through by the example agent; no file was changed.\n";
    }
    body += "\n## Commits\n\n- None: the example agent does not touch the repository.\n";
    body += "\n## Tests\n\n";
    body +=
        "- None run, so none is claimed to pass. A real agent lists here each command it ran and "
        "its result.\n";
    return {"Implementation log: " + in.ticket.title,
            "Example log for " + in.ticket.title + " - " +
                plural(steps.size(), "plan step", "plan steps") + " walked, no code changed",
            body};
}

Rendered render_review(const ArtifactInput& in) {
    const auto steps = plan_steps_for(in.ticket);
    std::string body;
    body += "## What changed and why\n\n";
    body += "- Nothing in the code: this ticket was worked by the model-free example agent.\n";
    body += "- The plan had " + plural(steps.size(), "step", "steps") +
            "; the implementation log walks through each.\n";
    body += "\n## How it was tested\n\n- Not tested: no code changed and no test was run.\n";
    body += "\n## Risks and what to look at first\n\n";
    body += "- None in the code. Look at the ticket's history: `board log " + in.ticket_id + "`.\n";
    body += "\n## Pull request description\n\n";
    body += "**" + in.ticket.title + "**\n\n";
    if (!in.ticket.description.empty()) body += repair_utf8(in.ticket.description) + "\n\n";
    body += numbered(steps);
    return {"Review: " + in.ticket.title,
            "Example review of " + in.ticket.title + " - nothing to merge, no code changed",
            body};
}

}  // namespace

std::optional<Phase> phase_from_name(std::string_view name) {
    if (name == "research") return Phase::research;
    if (name == "planning") return Phase::planning;
    if (name == "implementing") return Phase::implementing;
    if (name == "review") return Phase::review;
    return std::nullopt;
}

std::string_view phase_name(Phase phase) {
    switch (phase) {
        case Phase::research:
            return "research";
        case Phase::planning:
            return "planning";
        case Phase::implementing:
            return "implementing";
        case Phase::review:
            return "review";
    }
    return "research";
}

DirectiveScan find_directives(std::string_view prompt) {
    DirectiveScan scan;
    const auto lines = split_lines(prompt);
    for (std::size_t i = 0; i < lines.size(); ++i) {
        if (!is_directive_line(lines[i])) continue;
        const auto text = trim(trim(lines[i]).substr(directive_prefix.size()));
        auto parsed = parse_directive(text);
        if (!parsed.directive) {
            // inert: the daemon keeps stderr in the run's log, where a tag must not appear.
            scan.warnings.push_back(inert("prompt line " + std::to_string(i + 1) + ": ignoring \"" +
                                          std::string{trim(lines[i])} + "\": " + parsed.problem));
            continue;
        }
        const bool seen = std::any_of(scan.directives.begin(),
                                      scan.directives.end(),
                                      [&](const Directive& d) { return d.text == text; });
        if (!seen) scan.directives.push_back(std::move(*parsed.directive));
    }
    return scan;
}

Feedback read_feedback(std::string_view prompt) {
    Feedback feedback;
    const auto lines = split_lines(prompt);
    // The last such heading: earlier prompt text (the ticket, artifacts) is verbatim and could
    // quote one; the template's own section comes after them.
    const auto heading = std::find_if(lines.rbegin(), lines.rend(), [](std::string_view l) {
        return trim(l) == feedback_heading;
    });
    if (heading == lines.rend()) return feedback;
    feedback.section_found = true;
    // Markdown list rules: a bullet at column 0 starts a note; an indented line, or any line
    // right after a note's line, continues it; a heading, or an unindented line after a blank
    // one, ends the section (the template's own text follows it).
    bool in_note = false;
    bool after_blank = false;
    bool seen_text = false;
    for (auto line = heading.base(); line != lines.end(); ++line) {
        const auto text = trim(*line);
        if (text.empty()) {
            after_blank = true;
            continue;
        }
        const bool indented = is_blank(line->front());
        if (!indented && line->front() == '#') break;
        if (!indented && line->substr(0, 2) == "- ") {
            feedback.notes.emplace_back(trim(line->substr(2)));
            in_note = true;
        } else if (in_note && (indented || !after_blank)) {
            feedback.notes.back() += "\n" + std::string{text};
        } else if (seen_text && after_blank) {
            break;
        } else {
            in_note = false;  // `(none)`, or a line of prose before the notes
        }
        seen_text = true;
        after_blank = false;
    }
    return feedback;
}

TicketText read_ticket(std::string_view prompt, std::string_view ticket_id) {
    TicketText ticket;
    const auto lines = split_lines(prompt);
    // The shipped templates open with `... ticket {ticket.id}: "{ticket.title}" (...)`; the
    // title may itself hold quotes, so it runs to the last quote of the line.
    const std::string title_opening =
        ticket_id.empty() ? std::string{": \""} : std::string{ticket_id} + ": \"";
    for (std::size_t i = 0; i < lines.size() && i < 10 && ticket.title.empty(); ++i) {
        const auto open = lines[i].find(title_opening);
        const auto close = lines[i].rfind('"');
        if (open == std::string_view::npos || close < open + title_opening.size()) continue;
        const auto begin = open + title_opening.size();
        ticket.title = repair_utf8(one_line(lines[i].substr(begin, close - begin)));
    }
    if (ticket.title.empty()) ticket.title = ticket_id.empty() ? "(untitled)" : ticket_id;

    std::string description;
    for (const auto line : section(lines, "The ticket")) {
        if (is_directive_line(line)) continue;
        description += std::string{line} + "\n";
    }
    ticket.description = std::string{trim(description)};

    for (const auto line : section(lines, "The plan")) {
        const auto digits = line.find_first_not_of("0123456789");
        if (digits == 0 || digits == std::string_view::npos) continue;
        if (line.substr(digits, 2) != ". ") continue;
        const auto step = trim(line.substr(digits + 2));
        if (!step.empty()) ticket.plan_steps.push_back(repair_utf8(step));
    }
    return ticket;
}

std::vector<std::string> scenario_steps_done(std::string_view artifact) {
    std::vector<std::string> done;
    for (const auto line : split_lines(artifact)) {
        const auto text = trim(line);
        if (text.substr(0, scenario_step_prefix.size()) != scenario_step_prefix) continue;
        if (text.size() <= scenario_step_prefix.size() || text.back() != '`') continue;
        done.emplace_back(text.substr(scenario_step_prefix.size(),
                                      text.size() - scenario_step_prefix.size() - 1));
    }
    return done;
}

bool question_holds_ticket(std::string_view question_json) {
    constexpr std::string_view key = "\"type\"";
    std::size_t pos = 0;
    while ((pos = question_json.find(key, pos)) != std::string_view::npos) {
        pos += key.size();
        auto rest = question_json.substr(pos);
        rest = trim(rest);
        if (rest.empty() || rest.front() != ':') continue;  // "type" was a value, not a key
        rest = trim(rest.substr(1));
        return rest.substr(0, 14) != "\"non_blocking\"";
    }
    return true;
}

RunDecision decide_run(Phase phase,
                       const std::vector<Directive>& directives,
                       const Feedback& feedback,
                       const std::vector<std::string>& done_before) {
    RunDecision decision;
    const std::string phase_text{phase_name(phase)};
    std::vector<Directive> mine;
    std::copy_if(
        directives.begin(), directives.end(), std::back_inserter(mine), [&](const Directive& d) {
            return d.phase == phase;
        });
    if (mine.empty()) {
        decision.why = "the ticket sets no scenario for " + phase_text + ": completing the phase";
        return decision;
    }
    if (feedback.given()) {
        decision.why = "a human has spoken (" + plural(feedback.notes.size(), "note", "notes") +
                       "): setting the ticket's scenario for " + phase_text +
                       " aside and completing the phase";
        return decision;
    }
    std::vector<Directive> pending;
    std::copy_if(mine.begin(), mine.end(), std::back_inserter(pending), [&](const Directive& d) {
        return std::find(done_before.begin(), done_before.end(), d.text) == done_before.end();
    });
    if (pending.empty()) {
        decision.why = "the ticket's scenario for " + phase_text +
                       " was carried out in an earlier run: completing the phase";
        return decision;
    }

    bool hands_over = false;
    bool holds_for_answer = false;
    bool unfinished = false;
    for (const auto& directive : pending) {
        decision.carried_out.push_back(directive);
        if (directive.kind == Directive::Kind::fail) {
            decision.fail = true;
            decision.print_complete = false;
            decision.why = "the ticket's scenario makes " + phase_text +
                           " fail (while no human has spoken): exiting 1 without an artifact";
            return decision;
        }
        if (directive.kind == Directive::Kind::question) {
            holds_for_answer = holds_for_answer || question_holds_ticket(directive.question_json);
        } else if (directive.signal == "COMPLETE") {
            decision.print_complete = false;  // printed with its context already
        } else {
            hands_over = true;
            unfinished = unfinished || contains(unfinished_work_signals, directive.signal);
        }
    }
    if (hands_over || holds_for_answer) decision.print_complete = false;
    if (unfinished || holds_for_answer) decision.status = ArtifactStatus::in_progress;
    decision.why = "carrying out the ticket's scenario for " + phase_text + " (" +
                   plural(decision.carried_out.size(), "step", "steps") + ")";
    if (holds_for_answer && !hands_over) {
        decision.why += "; the question holds the ticket until a human answers it";
    }
    return decision;
}

std::string render_artifact(const ArtifactInput& in) {
    Rendered rendered;
    switch (in.phase) {
        case Phase::research:
            rendered = render_research(in);
            break;
        case Phase::planning:
            rendered = render_plan(in);
            break;
        case Phase::implementing:
            rendered = render_implementation_log(in);
            break;
        case Phase::review:
            rendered = render_review(in);
            break;
    }
    const bool complete = in.decision.status == ArtifactStatus::complete;
    std::string out = "---\n";
    out += complete ? "status: complete\n" : "status: in-progress\n";
    out += "summary: " +
           yaml_quoted(shorten(repair_utf8(one_line(rendered.summary)), max_summary_bytes)) + "\n";
    out += "---\n";
    out += "# " + repair_utf8(one_line(rendered.heading)) + "\n\n";
    out += "> Written by `board-example-agent` for " + in.ticket_id + " (" +
           std::string{phase_name(in.phase)} + (in.run.empty() ? "" : ", run " + in.run) +
           "), the model-free demo agent: it restates the ticket's own words, reads no code and "
           "changes none.\n\n";
    out += repair_utf8(rendered.body);
    // Not "## Human feedback": this artifact is quoted in later prompts, which must keep
    // exactly one section of that name.
    if (in.feedback.given()) {
        out += "\n## Feedback taken into account\n\n";
        for (const auto& note : in.feedback.notes) {
            out += "- " + repair_utf8(one_line(note)) + "\n";
        }
    }
    if (!in.decision.carried_out.empty()) {
        out += "\n## Scenario\n\n";
        out += complete ? "The ticket's scenario asked for this handoff; the work above is done.\n"
                        : "Draft: the ticket's scenario hands this phase to a human before it "
                          "is finished. The next run completes it.\n";
        out += "\n";
        for (const auto& directive : in.decision.carried_out) {
            out += std::string{scenario_step_prefix} + repair_utf8(directive.text) + "`\n";
        }
    }
    return out;
}

std::string promise_tag(std::string_view signal, std::string_view context) {
    std::string tag = "<promise>" + std::string{signal};
    if (!context.empty()) tag += ": " + std::string{context};
    return tag + "</promise>";
}

std::string inert(std::string_view text) {
    std::string out;
    for (const char c : repair_utf8(one_line(text))) {
        if (c == '<') {
            out += "‹";
        } else if (c == '>') {
            out += "›";
        } else {
            out += c;
        }
    }
    return out;
}

}  // namespace board::example_agent

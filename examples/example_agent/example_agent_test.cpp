// The example agent's pure parts: directives, the Human feedback section, the ticket's text in
// the shipped prompt templates, the decision rule of the demo and the rendered artifacts.

#include "example_agent.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <sstream>

using namespace board::example_agent;

namespace {

std::string replace_all(std::string text, std::string_view from, std::string_view to) {
    for (auto pos = text.find(from); pos != std::string::npos;
         pos = text.find(from, pos + to.size())) {
        text.replace(pos, from.size(), to);
    }
    return text;
}

/// A shipped template (prompts/<phase>.md) rendered the way the daemon does, so these tests
/// break if the templates and the agent's reading of them drift apart.
std::string rendered_prompt(std::string_view phase,
                            std::string_view description,
                            std::string_view feedback,
                            std::string_view plan = "") {
    const char* source = std::getenv("BOARD_SOURCE_DIR");
    REQUIRE(source != nullptr);
    const std::string file = std::string{source} + "/prompts/" + std::string{phase} + ".md";
    std::ifstream in(file);
    REQUIRE(in);
    std::ostringstream text;
    text << in.rdbuf();
    std::string prompt = text.str();
    prompt = replace_all(prompt, "{ticket.id}", "PROJ-3");
    prompt = replace_all(prompt, "{ticket.title}", "Document every \"board.yaml\" key");
    prompt = replace_all(prompt, "{ticket.type}", "chore");
    prompt = replace_all(prompt, "{ticket.priority}", "3");
    prompt = replace_all(prompt, "{ticket.dir}", "/b/tickets/PROJ-3");
    prompt = replace_all(prompt, "{artifact.path}", "/b/tickets/PROJ-3/research.md");
    prompt = replace_all(prompt, "{artifact.research}", "## Findings\n\n1. research text");
    prompt = replace_all(prompt, "{artifact.plan}", plan);
    prompt = replace_all(prompt, "{notes}", "(none)");
    prompt = replace_all(prompt, "{feedback}", feedback);
    prompt = replace_all(prompt, "{protocol}", "End with <promise>COMPLETE</promise>.");
    prompt = replace_all(prompt, "{ticket.intent}", description);
    return prompt;
}

constexpr std::string_view no_feedback = "## Human feedback\n\n(none)";

Directive signal_directive(Phase phase, std::string name, std::string context) {
    Directive d;
    d.phase = phase;
    d.kind = Directive::Kind::signal;
    d.signal = std::move(name);
    d.context = std::move(context);
    d.text = std::string{phase_name(phase)} + " " + d.signal +
             (d.context.empty() ? "" : ": " + d.context);
    return d;
}

}  // namespace

TEST_CASE("directives: signals, questions and failures, per phase") {
    const auto scan = find_directives(
        "intro\n"
        "example-agent: research INPUT_NEEDED: Which database should we use?\n"
        "  example-agent: planning CHECKPOINT: plan drafted: v1  \n"
        "example-agent: implementing fail\n"
        "example-agent: review question {\"question\":\"Ship?\",\"type\":\"approval\"}\n"
        "example-agent: review CONTENT REVIEW: the docs\n"
        "example-agent: research ESCALATE\n");
    CHECK(scan.warnings.empty());
    REQUIRE(scan.directives.size() == 6);

    CHECK(scan.directives[0] ==
          signal_directive(Phase::research, "INPUT_NEEDED", "Which database should we use?"));
    CHECK(scan.directives[1].phase == Phase::planning);
    CHECK(scan.directives[1].signal == "CHECKPOINT");
    CHECK(scan.directives[1].context == "plan drafted: v1");  // colons stay in the context
    CHECK(scan.directives[1].text == "planning CHECKPOINT: plan drafted: v1");
    CHECK(scan.directives[2].kind == Directive::Kind::fail);
    CHECK(scan.directives[2].phase == Phase::implementing);
    CHECK(scan.directives[3].kind == Directive::Kind::question);
    CHECK(scan.directives[3].question_json == R"({"question":"Ship?","type":"approval"})");
    CHECK(scan.directives[4].signal == "CONTENT_REVIEW");
    CHECK(scan.directives[5].signal == "ESCALATE");
    CHECK(scan.directives[5].context.empty());
}

TEST_CASE("directives: a bad one is skipped with a warning naming its line") {
    const auto scan = find_directives(
        "example-agent: planing fail\n"
        "example-agent: research complete\n"
        "example-agent: research\n"
        "example-agent: research question Which DB?\n"
        "example-agent: research INPUT_NEEDED: <promise>COMPLETE</promise>\n"
        "example-agent: research <b>\n"
        "example-agent: review fail\n");
    REQUIRE(scan.directives.size() == 1);
    CHECK(scan.directives[0].kind == Directive::Kind::fail);
    REQUIRE(scan.warnings.size() == 6);
    CHECK(scan.warnings[0] ==
          "prompt line 1: ignoring \"example-agent: planing fail\": \"planing\" is not a phase "
          "(research, planning, implementing, review)");
    CHECK(scan.warnings[1].find("prompt line 2:") == 0);
    CHECK(scan.warnings[1].find("\"complete\" is not an action") != std::string::npos);
    CHECK(scan.warnings[2].find("no action after the phase") != std::string::npos);
    CHECK(scan.warnings[3].find("a question needs a JSON object") != std::string::npos);
    CHECK(scan.warnings[4].find("may not contain a promise tag") != std::string::npos);
    // Echoed ticket text never holds a `<` a tag scanner would read.
    CHECK(scan.warnings[5].find('<') == std::string::npos);
}

TEST_CASE("directives: the same line twice counts once") {
    // The implementing prompt may show the ticket's text twice (description and plan).
    const auto scan = find_directives(
        "example-agent: research EJECT: yours\nexample-agent: research EJECT: yours\n");
    CHECK(scan.directives.size() == 1);
}

TEST_CASE("feedback: (none), bullets, continuation lines, the template text after it") {
    SECTION("(none)") {
        const auto feedback = read_feedback("## Human feedback\n\n(none)\n\n## What to produce\n");
        CHECK(feedback.section_found);
        CHECK_FALSE(feedback.given());
    }
    SECTION("one bullet per note; indented or directly following lines continue it") {
        const auto feedback = read_feedback(
            "## Human feedback\n\n- Use SQLite\n- Keep the old flag\n  documented as deprecated\n"
            "  in the table\n- lazy\ncontinuation\n\nIf there is human feedback above, ...\n");
        REQUIRE(feedback.notes.size() == 3);
        CHECK(feedback.notes[0] == "Use SQLite");
        CHECK(feedback.notes[1] == "Keep the old flag\ndocumented as deprecated\nin the table");
        CHECK(feedback.notes[2] == "lazy\ncontinuation");
    }
    SECTION("a line of prose before the notes is not a note") {
        const auto feedback =
            read_feedback("## Human feedback\nSince the last run:\n\n- Use SQLite\n");
        REQUIRE(feedback.notes.size() == 1);
        CHECK(feedback.notes[0] == "Use SQLite");
    }
    SECTION("the last section of that name is the template's") {
        const auto feedback = read_feedback(
            "## The ticket\n\n## Human feedback\n- quoted in the ticket\n\n"
            "## Human feedback\n\n(none)\n");
        CHECK_FALSE(feedback.given());
    }
    SECTION("no section") {
        const auto feedback = read_feedback("# A prompt\n\nwithout feedback\n");
        CHECK_FALSE(feedback.section_found);
        CHECK_FALSE(feedback.given());
    }
}

TEST_CASE("the shipped templates: title, description, feedback and directives") {
    const std::string description =
        "Users guess at keys; list each with its default and an example.\n"
        "\n"
        "## Context\n"
        "See `src/board/config.cpp`. Should the `manual` flag stay?\n"
        "example-agent: research INPUT_NEEDED: Which keys are deprecated?";
    for (const char* phase : {"research", "planning", "implementing"}) {
        CAPTURE(phase);
        const auto prompt = rendered_prompt(phase, description, no_feedback);
        const auto ticket = read_ticket(prompt, "PROJ-3");
        CHECK(ticket.title == "Document every \"board.yaml\" key");
        // The description's own `## ` heading does not end it; the directive line is dropped.
        CHECK(ticket.description ==
              "Users guess at keys; list each with its default and an example.\n\n## Context\n"
              "See `src/board/config.cpp`. Should the `manual` flag stay?");
        const auto feedback = read_feedback(prompt);
        CHECK(feedback.section_found);
        CHECK_FALSE(feedback.given());
        const auto scan = find_directives(prompt);
        CHECK(scan.warnings.empty());
        REQUIRE(scan.directives.size() == 1);
        CHECK(scan.directives[0].signal == "INPUT_NEEDED");
    }
    SECTION("a human's answer reaches the agent") {
        const auto prompt =
            rendered_prompt("research", description, "## Human feedback\n\n- None are.");
        const auto feedback = read_feedback(prompt);
        REQUIRE(feedback.notes.size() == 1);
        CHECK(feedback.notes[0] == "None are.");
    }
    SECTION("the plan's numbered steps, in implementing and review") {
        const std::string plan =
            "---\nstatus: complete\n---\n# Plan\n\n## Steps\n\n1. List the keys.\n"
            "2. Write docs/board-yaml.md.\n\n## Files\n\n- `docs/board-yaml.md`\n";
        for (const char* phase : {"implementing", "review"}) {
            CAPTURE(phase);
            const auto ticket =
                read_ticket(rendered_prompt(phase, description, no_feedback, plan), "PROJ-3");
            CHECK(ticket.plan_steps ==
                  std::vector<std::string>{"List the keys.", "Write docs/board-yaml.md."});
            CHECK(ticket.title == "Document every \"board.yaml\" key");
        }
    }
}

TEST_CASE("the title falls back to the ticket id") {
    CHECK(read_ticket("# Custom prompt\n", "PROJ-9").title == "PROJ-9");
    CHECK(read_ticket("", "").title == "(untitled)");
}

TEST_CASE("question type: only non_blocking lets the run complete") {
    CHECK(question_holds_ticket(R"({"question":"Which DB?"})"));
    CHECK(question_holds_ticket(R"({"question":"Which DB?","type":"blocking"})"));
    CHECK(question_holds_ticket(R"({"type" : "approval","question":"Ship?"})"));
    CHECK_FALSE(question_holds_ticket(R"({"question":"Colour?","type": "non_blocking"})"));
    // "type" as a value is not the key.
    CHECK_FALSE(question_holds_ticket(R"({"question":"type","type":"non_blocking"})"));
}

TEST_CASE("decide_run: directives apply while no human has spoken") {
    const std::vector<Directive> directives = {
        signal_directive(Phase::research, "INPUT_NEEDED", "Which DB?"),
        signal_directive(Phase::planning, "APPROVAL_NEEDED", "risky"),
    };
    const Feedback none{true, {}};
    const Feedback answered{true, {"SQLite"}};

    SECTION("handoff with a draft artifact") {
        const auto decision = decide_run(Phase::research, directives, none, {});
        REQUIRE(decision.carried_out.size() == 1);
        CHECK(decision.carried_out[0].signal == "INPUT_NEEDED");
        CHECK_FALSE(decision.print_complete);
        CHECK_FALSE(decision.fail);
        CHECK(decision.status == ArtifactStatus::in_progress);
    }
    SECTION("a request for approval hands over finished work") {
        const auto decision = decide_run(Phase::planning, directives, none, {});
        CHECK_FALSE(decision.print_complete);
        CHECK(decision.status == ArtifactStatus::complete);
    }
    SECTION("once a human answered, the phase completes") {
        const auto decision = decide_run(Phase::research, directives, answered, {});
        CHECK(decision.carried_out.empty());
        CHECK(decision.print_complete);
        CHECK(decision.status == ArtifactStatus::complete);
        CHECK(decision.why.find("a human has spoken (1 note)") != std::string::npos);
    }
    SECTION("a step an earlier run recorded is not repeated (approved without a note)") {
        const auto decision =
            decide_run(Phase::research, directives, none, {"research INPUT_NEEDED: Which DB?"});
        CHECK(decision.carried_out.empty());
        CHECK(decision.print_complete);
    }
    SECTION("no directive for the phase") {
        const auto decision = decide_run(Phase::review, directives, none, {});
        CHECK(decision.carried_out.empty());
        CHECK(decision.print_complete);
        CHECK(decision.status == ArtifactStatus::complete);
    }
}

TEST_CASE("decide_run: fail, questions, COMPLETE with a context") {
    Directive fail;
    fail.phase = Phase::implementing;
    fail.kind = Directive::Kind::fail;
    fail.text = "implementing fail";
    Directive blocking;
    blocking.phase = Phase::implementing;
    blocking.kind = Directive::Kind::question;
    blocking.question_json = R"({"question":"Which DB?"})";
    blocking.text = "implementing question " + blocking.question_json;
    Directive non_blocking = blocking;
    non_blocking.question_json = R"({"question":"Colour?","type":"non_blocking"})";
    non_blocking.text = "implementing question " + non_blocking.question_json;
    const Feedback none{true, {}};

    SECTION("fail ends the run: later directives are not carried out") {
        const auto decision = decide_run(Phase::implementing, {fail, blocking}, none, {});
        CHECK(decision.fail);
        CHECK(decision.carried_out == std::vector<Directive>{fail});
        CHECK_FALSE(decision.print_complete);
    }
    SECTION("a blocking question holds the ticket: no signal, a draft") {
        const auto decision = decide_run(Phase::implementing, {blocking}, none, {});
        CHECK_FALSE(decision.print_complete);
        CHECK(decision.status == ArtifactStatus::in_progress);
    }
    SECTION("a non-blocking question: the agent carries on and completes") {
        const auto decision = decide_run(Phase::implementing, {non_blocking}, none, {});
        CHECK(decision.print_complete);
        CHECK(decision.status == ArtifactStatus::complete);
    }
    SECTION("COMPLETE with a context is printed once, by the directive") {
        const auto decision =
            decide_run(Phase::implementing,
                       {signal_directive(Phase::implementing, "COMPLETE", "done")},
                       none,
                       {});
        CHECK_FALSE(decision.print_complete);
        CHECK(decision.status == ArtifactStatus::complete);
    }
}

TEST_CASE("artifacts: front matter, sections from the ticket, the scenario record") {
    ArtifactInput input;
    input.ticket_id = "PROJ-3";
    input.run = "0003";
    input.ticket.title = "Document every \"board.yaml\" key";
    input.ticket.description =
        "Users guess at keys; list each with its default. See `src/board/config.cpp`.\n"
        "Should the `manual` flag stay?";
    input.decision.why = "test";

    SECTION("research: findings, open questions, risks") {
        input.phase = Phase::research;
        const auto text = render_artifact(input);
        CHECK(text.find("---\nstatus: complete\nsummary: \"Example research on Document every "
                        "\\\"board.yaml\\\" key - 3 findings, 1 open question\"\n---\n") == 0);
        CHECK(text.find("# Research: Document every \"board.yaml\" key\n") != std::string::npos);
        CHECK(text.find("board-example-agent` for PROJ-3 (research, run 0003)") !=
              std::string::npos);
        CHECK(text.find("## Findings\n\n1. The ticket says: Users guess at keys; list each with "
                        "its default.\n") != std::string::npos);
        CHECK(text.find("`src/board/config.cpp`") != std::string::npos);
        CHECK(text.find("## Open questions\n\n- Should the `manual` flag stay?\n") !=
              std::string::npos);
        CHECK(text.find("## Risks\n") != std::string::npos);
    }
    SECTION("planning: numbered steps derived from the description") {
        input.phase = Phase::planning;
        const auto text = render_artifact(input);
        CHECK(text.find("summary: \"Example plan for Document every \\\"board.yaml\\\" key in 5 "
                        "steps\"") != std::string::npos);
        CHECK(text.find("1. Re-read the research note and confirm the goal: Document every "
                        "\"board.yaml\" key.\n2. Make this true, with a test that shows it: "
                        "Users guess at keys; list each with its default.\n") != std::string::npos);
        CHECK(text.find("## Decisions for a human\n\n- Should the `manual` flag stay?\n") !=
              std::string::npos);
        // The plan's steps are what the implementing prompt will show: they read back.
        const auto ticket = read_ticket("## The plan\n\n" + text + "\n## Notes so far\n", "");
        CHECK(ticket.plan_steps.size() == 5);
    }
    SECTION("implementing and review: the plan's steps, nothing claimed") {
        input.ticket.plan_steps = {"List the keys.", "Write the docs."};
        input.phase = Phase::implementing;
        auto text = render_artifact(input);
        CHECK(text.find("1. List the keys.\n   Walked through by the example agent") !=
              std::string::npos);
        CHECK(text.find("None run, so none is claimed to pass.") != std::string::npos);
        input.phase = Phase::review;
        text = render_artifact(input);
        CHECK(text.find("## Pull request description\n") != std::string::npos);
        CHECK(text.find("summary: \"Example review of") != std::string::npos);
    }
    SECTION("a handoff writes a draft that records the step, read back by the next run") {
        input.phase = Phase::research;
        input.decision.status = ArtifactStatus::in_progress;
        input.decision.carried_out = {
            signal_directive(Phase::research, "INPUT_NEEDED", "Which `keys` are old?")};
        const auto text = render_artifact(input);
        CHECK(text.find("---\nstatus: in-progress\n") == 0);
        CHECK(text.find("- Which `keys` are old? (handed to a human)") != std::string::npos);
        CHECK(scenario_steps_done(text) ==
              std::vector<std::string>{"research INPUT_NEEDED: Which `keys` are old?"});
    }
    SECTION("feedback is listed, under a heading that is not the prompt's") {
        input.phase = Phase::planning;
        input.feedback = {true, {"Use SQLite,\nnot Postgres"}};
        const auto text = render_artifact(input);
        CHECK(text.find("## Feedback taken into account\n\n- Use SQLite, not Postgres\n") !=
              std::string::npos);
        CHECK(text.find("## Human feedback") == std::string::npos);
    }
    SECTION("invalid UTF-8 in the ticket becomes U+FFFD") {
        input.phase = Phase::research;
        input.ticket.title = "bad \xff byte";
        const auto text = render_artifact(input);
        CHECK(text.find("bad \xEF\xBF\xBD byte") != std::string::npos);
        CHECK(text.find('\xff') == std::string::npos);
    }
}

TEST_CASE("a demo in three runs: hand over, human answers, complete") {
    const std::string description =
        "Pick where the cache lives.\n"
        "example-agent: research INPUT_NEEDED: Which database should we use?";
    std::string artifact;  // the file on disk between runs
    const auto run_once = [&](std::string_view feedback) {
        const auto prompt = rendered_prompt("research", description, feedback);
        ArtifactInput input;
        input.phase = Phase::research;
        input.ticket_id = "PROJ-3";
        input.ticket = read_ticket(prompt, "PROJ-3");
        input.feedback = read_feedback(prompt);
        input.decision = decide_run(Phase::research,
                                    find_directives(prompt).directives,
                                    input.feedback,
                                    scenario_steps_done(artifact));
        artifact = render_artifact(input);
        return input.decision;
    };
    auto decision = run_once(no_feedback);
    CHECK(decision.carried_out.size() == 1);
    CHECK(artifact.find("status: in-progress") != std::string::npos);

    SECTION("the human answers: the research completes with the answer in it") {
        decision = run_once("## Human feedback\n\n- Use SQLite.");
        CHECK(decision.print_complete);
        CHECK(artifact.find("status: complete") != std::string::npos);
        CHECK(artifact.find("- Use SQLite.") != std::string::npos);
    }
    SECTION("the human approves without a note: the handoff is not repeated") {
        decision = run_once(no_feedback);
        CHECK(decision.carried_out.empty());
        CHECK(decision.print_complete);
    }
}

TEST_CASE("promise tags and inert echoes") {
    CHECK(promise_tag("COMPLETE", "") == "<promise>COMPLETE</promise>");
    CHECK(promise_tag("INPUT_NEEDED", "Which DB?") == "<promise>INPUT_NEEDED: Which DB?</promise>");
    CHECK(inert("a <promise>X</promise>\nb") == "a ‹promise›X‹/promise› b");
}

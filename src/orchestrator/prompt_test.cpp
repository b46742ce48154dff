#include "orchestrator/prompt.hpp"

#include "support/files.hpp"

#include <board/agent_output.hpp>
#include <board/artifact.hpp>

#include <catch2/catch.hpp>

#include <filesystem>
#include <unistd.h>

using namespace board;
using namespace board::orchestrator;
namespace fs = std::filesystem;

namespace {

Ticket sample_ticket() {
    Ticket t;
    t.id = "PROJ-7";
    t.title = "Retry uploads";
    t.description = "Uploads fail on 502; retry them.";
    t.type = TicketType::bug;
    t.priority = 1;
    t.last_run_ended_at = 5'000;
    t.notes = {{ActorKind::human, "ana", "old advice", 1'000},
               {ActorKind::agent, "research", "research done", 5'000},
               {ActorKind::human, "ana", "Use the retry helper\nin net/retry.cpp", 6'000},
               {ActorKind::system, "", "gate passed", 6'500}};
    return t;
}

}  // namespace

TEST_CASE("every shipped prompt uses only known placeholders and asks for the artifact") {
    for (const Status phase : all_statuses) {
        if (!is_agent_phase(phase)) {
            CHECK(shipped_prompt(phase).empty());
            continue;
        }
        CAPTURE(to_string(phase));
        const auto text = shipped_prompt(phase);
        REQUIRE_FALSE(text.empty());
        CHECK_FALSE(check_placeholders(text).has_value());
        CHECK(text.find("{artifact.path}") != std::string_view::npos);
        CHECK(text.find("{protocol}") != std::string_view::npos);
        CHECK(text.find("{feedback}") != std::string_view::npos);
    }
}

TEST_CASE("rendering fills in the ticket, the artifact path and the feedback") {
    const Ticket t = sample_ticket();
    PromptInput in;
    in.ticket = &t;
    in.phase = Status::planning;
    in.ticket_dir = "/b/tickets/PROJ-7";
    in.artifact_path = "/b/tickets/PROJ-7/plan.md";
    in.research_text = "Findings: net/retry.cpp";
    const std::string out = render_prompt(shipped_prompt(Status::planning), in);
    CHECK(out.find("PROJ-7") != std::string::npos);
    CHECK(out.find("\"Retry uploads\" (bug, priority 1)") != std::string::npos);
    CHECK(out.find("Uploads fail on 502; retry them.") != std::string::npos);
    CHECK(out.find("Findings: net/retry.cpp") != std::string::npos);
    CHECK(out.find("/b/tickets/PROJ-7/plan.md") != std::string::npos);
    CHECK(out.find("<promise>COMPLETE</promise>") != std::string::npos);
    CHECK(out.find('{' + std::string{"ticket."}) == std::string::npos);  // nothing left unfilled
}

TEST_CASE("research and planning prompts carry what an earlier run left unfinished") {
    const Ticket t = sample_ticket();
    PromptInput in;
    in.ticket = &t;
    in.phase = Status::research;
    in.artifact_path = "/b/tickets/PROJ-7/runs/0002-research/research.md";
    const std::string fresh = render_prompt(shipped_prompt(Status::research), in);
    CHECK(fresh.find("## Your research so far\n\n(none: start fresh)") != std::string::npos);
    in.unfinished_text = "---\nstatus: in-progress\n---\nThe retry loop is in net/retry.cpp\n";
    for (const Status phase : {Status::research, Status::planning}) {
        in.phase = phase;
        const std::string again = render_prompt(shipped_prompt(phase), in);
        CHECK(again.find("The retry loop is in net/retry.cpp") != std::string::npos);
        CHECK(again.find("continue it rather than starting over") != std::string::npos);
    }
}

TEST_CASE("the human feedback section holds the human notes since the last run only") {
    const std::string section = feedback_section(sample_ticket());
    CHECK(section.rfind("## Human feedback\n\n", 0) == 0);
    CHECK(section.find("Use the retry helper\n  in net/retry.cpp") != std::string::npos);
    CHECK(section.find("old advice") == std::string::npos);
    CHECK(section.find("research done") == std::string::npos);
    CHECK(section.find("gate passed") == std::string::npos);

    Ticket quiet = sample_ticket();
    quiet.last_run_ended_at = 7'000;
    CHECK(feedback_section(quiet) == "## Human feedback\n\n(none)\n");
}

TEST_CASE("an unknown placeholder is named with its line, other braces are text") {
    CHECK(check_placeholders("a\nb {ticket.name}\n") ==
          "line 2: unknown placeholder {ticket.name}");
    CHECK_FALSE(check_placeholders("JSON: {\"question\": 1} and {} and {A.B}").has_value());
    const Ticket t = sample_ticket();
    PromptInput in;
    in.ticket = &t;
    CHECK(render_prompt("{\"x\": {ticket.id}}", in) == "{\"x\": PROJ-7}");
}

TEST_CASE("a board's own prompt wins over the shipped one, and a broken one stops the board") {
    const fs::path board =
        fs::temp_directory_path() / ("board-prompts-" + std::to_string(::getpid()));
    fs::remove_all(board);
    fs::create_directories(board / "prompts");
    REQUIRE(write_file_atomically(board / "prompts" / "review.md",
                                  "Review {ticket.id}. {protocol}") == "");
    auto loaded = load_prompt_templates(board);
    REQUIRE(std::holds_alternative<PromptTemplates>(loaded));
    const auto& templates = std::get<PromptTemplates>(loaded);
    CHECK(templates.of(Status::review) == "Review {ticket.id}. {protocol}");
    CHECK(templates.of(Status::research) == shipped_prompt(Status::research));

    REQUIRE(write_file_atomically(board / "prompts" / "planning.md", "Plan\n{ticket.titel}") == "");
    auto broken = load_prompt_templates(board);
    REQUIRE(std::holds_alternative<std::string>(broken));
    CHECK(std::get<std::string>(broken) == (board / "prompts" / "planning.md").string() +
                                               ": line 2: unknown placeholder {ticket.titel}");
    fs::remove_all(board);
}

TEST_CASE("a rendered prompt read back as output holds no signal and no question") {
    // An agent that echoes its prompt must not hand in the protocol's examples.
    const Ticket t = sample_ticket();
    for (const Status phase : all_statuses) {
        if (!is_agent_phase(phase)) continue;
        CAPTURE(to_string(phase));
        PromptInput in;
        in.ticket = &t;
        in.phase = phase;
        in.ticket_dir = "/b/tickets/PROJ-7";
        in.artifact_path = "/b/tickets/PROJ-7/x.md";
        const std::string out = render_prompt(shipped_prompt(phase), in);
        CHECK(out.find("<promise>COMPLETE</promise>") != std::string::npos);  // still taught
        const auto signals = scan_signals(out);
        CHECK_FALSE(signals.signal.has_value());
        CHECK(signals.warnings.empty());
        CHECK(scan_questions(out).questions.empty());
    }
}

#pragma once
// One OutputReader per dialect (agent_dialect.hpp); make_output_reader picks one.

#include <board/agent_dialect.hpp>

#include <memory>
#include <string_view>

namespace board::dialect_detail {

std::unique_ptr<OutputReader> make_claude_reader();
std::unique_ptr<OutputReader> make_codex_reader();
std::unique_ptr<OutputReader> make_gemini_reader();
std::unique_ptr<OutputReader> make_generic_reader(std::string_view prompt);

}  // namespace board::dialect_detail

# cmake -DBOARD=... -DDAEMON=... -DHELP2MAN=... -DOUT=... -P generate.cmake
# Writes into OUT the completion scripts (`board completion SHELL`) and, when HELP2MAN is
# set, board.1 and board-daemon.1 from the programs' --help and --version. board.1 adds a
# COMMANDS section made of each command's own --help.

foreach(shell bash zsh fish)
  execute_process(COMMAND "${BOARD}" completion ${shell}
    OUTPUT_FILE "${OUT}/completion.${shell}" COMMAND_ERROR_IS_FATAL ANY)
endforeach()
file(RENAME "${OUT}/completion.bash" "${OUT}/board.bash")
file(RENAME "${OUT}/completion.zsh" "${OUT}/_board")
file(RENAME "${OUT}/completion.fish" "${OUT}/board.fish")

if(NOT HELP2MAN)
  return()
endif()

# Text as roff that is shown as written: backslashes escaped, no line read as a request.
function(board_roff_literal text out)
  string(REPLACE "\\" "\\e" text "${text}")
  string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" text "${text}")
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

# help2man's NAME line: the --help's first line, "board: what it is, more" -> "what it is".
function(board_man_name program out)
  execute_process(COMMAND "${program}" --help OUTPUT_VARIABLE help COMMAND_ERROR_IS_FATAL ANY)
  string(REGEX MATCH "^[^:\n]*: ([^,.\n]*)" _ "${help}")
  set(${out} "${CMAKE_MATCH_1}" PARENT_SCOPE)
endfunction()

execute_process(COMMAND "${BOARD}" --help OUTPUT_VARIABLE help COMMAND_ERROR_IS_FATAL ANY)
string(REGEX MATCH "\nSubcommands:\n(.*)" _ "${help}")
string(REGEX MATCHALL "(^|\n)  [a-z][a-z-]*" commands "${CMAKE_MATCH_1}")
set(include "[COMMANDS]\nEach command's own \\fB\\-\\-help\\fR:\n")
foreach(command IN LISTS commands)
  string(STRIP "${command}" command)
  if(command STREQUAL "completion")
    set(args completion --help)
  else()
    set(args ${command} --help)
  endif()
  execute_process(COMMAND "${BOARD}" ${args} OUTPUT_VARIABLE text COMMAND_ERROR_IS_FATAL ANY)
  board_roff_literal("${text}" text)
  string(APPEND include ".SS ${command}\n.nf\n${text}.fi\n")
endforeach()
string(APPEND include "[SEE ALSO]\n.BR board-daemon (1)\n")
file(WRITE "${OUT}/board.h2m" "${include}")

board_man_name("${BOARD}" name)
execute_process(COMMAND "${HELP2MAN}" --no-info --section 1 --name "${name}"
    --include "${OUT}/board.h2m" --output "${OUT}/board.1" "${BOARD}"
  COMMAND_ERROR_IS_FATAL ANY)

file(WRITE "${OUT}/board-daemon.h2m" "[SEE ALSO]\n.BR board (1)\n")
board_man_name("${DAEMON}" name)
execute_process(COMMAND "${HELP2MAN}" --no-info --section 1 --name "${name}"
    --include "${OUT}/board-daemon.h2m" --output "${OUT}/board-daemon.1" "${DAEMON}"
  COMMAND_ERROR_IS_FATAL ANY)

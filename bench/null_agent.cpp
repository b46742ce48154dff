// board_null_agent: the cheapest agent there is, for measuring the daemon's own overhead:
// it writes a complete artifact to $BOARD_ARTIFACT and signals COMPLETE. It does not read its
// prompt (the daemon must cope with that anyway).

#include <cstdio>
#include <cstdlib>

int main() {
    const char* artifact = std::getenv("BOARD_ARTIFACT");
    if (!artifact) {
        std::fputs("board_null_agent: BOARD_ARTIFACT is not set\n", stderr);
        return 70;
    }
    std::FILE* out = std::fopen(artifact, "w");
    if (!out) {
        std::perror(artifact);
        return 70;
    }
    std::fputs("---\nstatus: complete\nsummary: nothing to see\n---\nDone.\n", out);
    std::fclose(out);
    std::puts("<promise>COMPLETE</promise>");
    return 0;
}

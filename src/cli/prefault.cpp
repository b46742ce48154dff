// Maps the `board` executable's pages in a few system calls before it starts, instead of
// one page fault at a time as it runs.
//
// Why: `board` is a short-lived process, and on a virtual machine where every page fault
// is a trap to the hypervisor (about 12 µs on this project's CI machines, against well under
// 1 µs on bare metal) a `board create` spent a millisecond faulting: 102 faults, 45 of them
// in the 4 MB of code (one per 64 KB the kernel maps around a fault), 29 in the heap.
// MADV_POPULATE_READ/WRITE map a whole range in one call, at about 1 µs a page; `create`
// now takes 42 faults, most of them in the C library's start-up, before this runs.
//
// It runs from .preinit_array: after the C library has set itself up, before any static
// constructor, so the constructors' own faults are saved too. Best effort throughout: a
// kernel older than 5.14 (no MADV_POPULATE_*) or any failure leaves the pages to fault in
// as usual. Linked into the static `board` executable only; the daemon is long-lived.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <elf.h>
#include <link.h>
#include <malloc.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

namespace {

constexpr std::uintptr_t page = 4096;

void populate(std::uintptr_t begin, std::uintptr_t end, int advice) {
    begin &= ~(page - 1);
    end = (end + page - 1) & ~(page - 1);
    if (end > begin) (void)::madvise(reinterpret_cast<void*>(begin), end - begin, advice);
}

/// The program's own segments: code read in, writable data copied and zeroed now. RELRO
/// data is left alone (it is read-only by now; writing would fail).
void populate_segments() {
    const auto* headers = reinterpret_cast<const ElfW(Phdr)*>(::getauxval(AT_PHDR));
    const auto count = static_cast<std::size_t>(::getauxval(AT_PHNUM));
    if (headers == nullptr || count == 0) return;
    // A static non-PIE executable is loaded at its link addresses (bias 0); a PIE's bias is
    // where its headers are, minus where PT_PHDR says they would be.
    std::uintptr_t bias = 0;
    std::uintptr_t relro_end = 0;
    for (std::size_t i = 0; i < count; ++i) {
        if (headers[i].p_type == PT_PHDR)
            bias = reinterpret_cast<std::uintptr_t>(headers) - headers[i].p_vaddr;
    }
    for (std::size_t i = 0; i < count; ++i) {
        if (headers[i].p_type == PT_GNU_RELRO)
            relro_end = bias + headers[i].p_vaddr + headers[i].p_memsz;
    }
    for (std::size_t i = 0; i < count; ++i) {
        const auto& header = headers[i];
        if (header.p_type != PT_LOAD) continue;
        std::uintptr_t begin = bias + header.p_vaddr;
        const std::uintptr_t end = begin + header.p_memsz;
        if ((header.p_flags & PF_W) != 0) {
            if (relro_end > begin && relro_end < end) begin = (relro_end + page - 1) & ~(page - 1);
            populate(begin, end, MADV_POPULATE_WRITE);
        } else {
            populate(begin, end, MADV_POPULATE_READ);
        }
    }
}

/// The heap: malloc grows it 1 MB at a time from now on (not the default 128 KB), and the
/// first 160 KB, about what `create` and `note` use, is mapped at once. (Queries that load a
/// whole board prepare a bigger heap for themselves: prepare_heap_for_board.)
void populate_heap() {
    constexpr std::size_t first = 160 << 10;
    (void)::mallopt(M_TOP_PAD, 1 << 20);
    (void)::mallopt(M_TRIM_THRESHOLD, 4 << 20);  // freeing must not hand the pad back
    (void)::mallopt(M_MMAP_THRESHOLD, 1 << 20);  // so the block below comes from the heap
    // Volatile: a malloc whose block is never used may be left out by the compiler.
    void* volatile grow = std::malloc(first);
    const auto heap_begin = reinterpret_cast<std::uintptr_t>(grow);
    const auto heap_end = reinterpret_cast<std::uintptr_t>(::sbrk(0));
    if (grow == nullptr || heap_end == static_cast<std::uintptr_t>(-1) || heap_end <= heap_begin)
        return std::free(grow);
    populate(heap_begin, heap_begin + first, MADV_POPULATE_WRITE);
    std::free(grow);
}

void prefault_board_process(int, char**, char**) {
    populate_segments();
    populate_heap();
}

}  // namespace

// NOLINTNEXTLINE: the section is the interface (the C library calls these before main).
__attribute__((section(".preinit_array"),
               used)) void (*const board_prefault)(int, char**, char**) = prefault_board_process;

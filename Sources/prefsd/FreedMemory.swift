import CMalloc

/// Gives back to the system the memory that malloc holds free (`malloc_trim`): pages of
/// freed blocks in every thread's arena, not only at the top of the heap. prefsd's start
/// allocates and frees a good deal on several threads (the bus setup, the store's load);
/// without this, about half a megabyte of it stays resident in an idle prefsd, in arenas
/// whose free blocks malloc keeps for later (docs/benchmarks.md, "prefsd's memory").
func releaseFreedMemory() {
    _ = malloc_trim(0)
}

// The floor of the benchmark: an empty program compiled with the release flags.
export {};

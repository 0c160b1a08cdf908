"""A source of fragments driven through the engine into one ScanResult, on one core or many."""

"""The backup archive's pure parts: its manifest, its reader's checks and the remapping of ids
inside values. No Django: these take plain data and are fuzzed on their own."""

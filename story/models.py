"""Story capability (world events, narrative plans): its data arrives with its own issue."""

"""Memory settings of a tenant and of its characters: services write, selectors read."""

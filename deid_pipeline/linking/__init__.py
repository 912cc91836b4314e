"""Person linking: which documents belong to one person, and that person's id."""

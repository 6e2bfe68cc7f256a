"""Console pages of images: image configs (list, new, edit, delete, Test)."""

"""The rounds style: an external driver runs fresh host processes, one per round."""

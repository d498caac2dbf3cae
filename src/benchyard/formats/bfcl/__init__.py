"""BFCL (Berkeley Function-Calling Leaderboard): the importer and the AST check of function calls."""

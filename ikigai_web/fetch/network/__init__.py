"""web-fetch's network side: the guard, the session, robots.txt, the soft-404 probe, the browser."""

"""Token-metered data service: one method per operation of the OpenAPI document.

Generated from the OpenAPI document by scripts/clients.ts (npm run clients): do not edit.
"""

from __future__ import annotations

from typing import Any

from ._runtime import Page, Pages, Transport, new_idempotency_key


class Client(Transport):
    """The service's API: ``Client("https://data.example.com", api_key="tmd_live_...")``."""

    @staticmethod
    def _body(answer: tuple[Any, dict[str, str]]) -> Any:
        return answer[0]

    def get_pricing(self) -> Any:
        """Pricing configuration (spec 2.2): costs per dataset, packages, loyalty tiers, how you pay

        GET /api/v1/pricing (operationId getPricing)

        Returns:
            The answer: JSON as dicts and lists, any other media type as text, None when empty.

        Raises:
            ProblemError: on an error answer; the codes it documents:
                400: invalid_request
                401: invalid_key, key_expired, key_revoked, invalid_session
                429: rate_limited, daily_limit, concurrency_limit, ip_fence
                503: service_unavailable
        """
        return self._body(
            self.request(
                "GET",
                "/api/v1/pricing",
            )
        )

    def describe_sandbox(self) -> Any:
        """Sandbox key configuration (spec 2.1)

        GET /api/v1/auth/sandbox (operationId describeSandbox)

        Returns:
            The answer: JSON as dicts and lists, any other media type as text, None when empty.

        Raises:
            ProblemError: on an error answer; the codes it documents:
                400: invalid_request
                401: invalid_key, key_expired, key_revoked, invalid_session
                429: rate_limited, daily_limit, concurrency_limit, ip_fence
                503: service_unavailable
        """
        return self._body(
            self.request(
                "GET",
                "/api/v1/auth/sandbox",
            )
        )

    def issue_sandbox_key(self) -> Any:
        """Issue a free sandbox key: 72 hours, 2500 tokens in its own wallet, Starter limits, P0
        reads only

        POST /api/v1/auth/sandbox (operationId issueSandboxKey)

        Returns:
            The answer: JSON as dicts and lists, any other media type as text, None when empty.

        Raises:
            ProblemError: on an error answer; the codes it documents:
                400: invalid_request, malformed_json
                403: forbidden
                413: payload_too_large
                415: unsupported_media_type
                429: ip_fence, issuance_limited
                503: service_unavailable
        """
        return self._body(
            self.request(
                "POST",
                "/api/v1/auth/sandbox",
            )
        )

    def describe_public_test(self) -> Any:
        """The free public test (spec 2.6)

        GET /api/v1/auth/public-test (operationId describePublicTest)

        Returns:
            The answer: JSON as dicts and lists, any other media type as text, None when empty.

        Raises:
            ProblemError: on an error answer; the codes it documents:
                400: invalid_request
                401: invalid_key, key_expired, key_revoked, invalid_session
                429: rate_limited, daily_limit, concurrency_limit, ip_fence
                503: service_unavailable
        """
        return self._body(
            self.request(
                "GET",
                "/api/v1/auth/public-test",
            )
        )

    def register_public_test(
        self,
        body: dict[str, Any],
    ) -> Any:
        """Register for the free public test: creates the login account, credits the 10000-token
        signup grant once, issues a 30-day key

        An email that already has an account is refused with 409 account_exists (its password is not
        checked), unless the request sets rotate_key: then, with the right password, the account
        gets a new public-test key and the one it had stops working.

        POST /api/v1/auth/public-test (operationId registerPublicTest)

        Args:
            body: A JSON object. email (str, required): Your email; it is the login of the account.;
                password (str, required): 10 to 200 characters.; rotate_key (bool): For an email
                that has an account: check the password and issue a new public-test key, revoking
                the one the account has. Without it such a registration is refused (409
                account_exists).

        Returns:
            The answer: JSON as dicts and lists, any other media type as text, None when empty.

        Raises:
            ProblemError: on an error answer; the codes it documents:
                400: invalid_request, malformed_json
                401: invalid_login
                403: forbidden, public_test_window_closed
                409: conflict, account_exists
                413: payload_too_large
                415: unsupported_media_type
                429: ip_fence, issuance_limited, login_throttled
                503: service_unavailable
        """
        return self._body(
            self.request(
                "POST",
                "/api/v1/auth/public-test",
                body=body,
            )
        )

    def healthz(self) -> Any:
        """Process liveness

        GET /healthz (operationId healthz)

        Returns:
            The answer: JSON as dicts and lists, any other media type as text, None when empty.

        Raises:
            ProblemError: on an error answer; the codes it documents:
                400: invalid_request
        """
        return self._body(
            self.request(
                "GET",
                "/healthz",
            )
        )

    def readyz(self) -> Any:
        """Readiness: the store answers (503 if not); the limiter is reported

        The store (ledger) must answer: without it nothing can be served. The limiter is reported
        but does not make the node unready: with Redis unreachable each node keeps enforcing its
        share of every limit (`degraded`); `local` means in-process limits by configuration (no
        REDIS_URL).

        GET /readyz (operationId readyz)

        Returns:
            The answer: JSON as dicts and lists, any other media type as text, None when empty.

        Raises:
            ProblemError: on an error answer; the codes it documents:
                400: invalid_request
                503: service_unavailable
        """
        return self._body(
            self.request(
                "GET",
                "/readyz",
            )
        )

    def login(
        self,
        body: dict[str, Any],
    ) -> Any:
        """Log in to an account: returns a 12-hour session JWT (also set as the tmd_session cookie)

        POST /api/v1/auth/login (operationId login)

        Args:
            body: A JSON object. email (str, required): Your email; it is the login of the account.;
                password (str, required): 10 to 200 characters.; client (str): terminal: reads carry
                the 35% Terminal surcharge.

        Returns:
            The answer: JSON as dicts and lists, any other media type as text, None when empty.

        Raises:
            ProblemError: on an error answer; the codes it documents:
                400: invalid_request, malformed_json
                401: invalid_login
                413: payload_too_large
                415: unsupported_media_type
                429: ip_fence, login_throttled
                503: service_unavailable
        """
        return self._body(
            self.request(
                "POST",
                "/api/v1/auth/login",
                body=body,
            )
        )

    def request_password_reset(
        self,
        body: dict[str, Any],
    ) -> Any:
        """Ask for a password-reset link by email: 202 whether or not the email has an account

        When the email has an account, a link to /terminal/reset-password?token=… is mailed to it;
        it works once, for 30 minutes (password_reset.link_ttl_minutes). The answer is the same for
        an email with no account. 3 requests per email and 10 per client IP an hour (429
        password_reset_limited); 503 password_reset_unavailable when the operator configured no SMTP
        server.

        POST /api/v1/auth/password-reset (operationId requestPasswordReset)

        Args:
            body: A JSON object. email (str, required): The email of the account.

        Returns:
            The answer: JSON as dicts and lists, any other media type as text, None when empty.

        Raises:
            ProblemError: on an error answer; the codes it documents:
                400: invalid_request, malformed_json
                413: payload_too_large
                415: unsupported_media_type
                429: ip_fence, password_reset_limited
                503: service_unavailable, password_reset_unavailable
        """
        return self._body(
            self.request(
                "POST",
                "/api/v1/auth/password-reset",
                body=body,
            )
        )

    def confirm_password_reset(
        self,
        body: dict[str, Any],
    ) -> Any:
        """Set a new password with a reset link's token; every session of the account ends

        The token is the link's `token` parameter. It works once: a used, expired or unknown token
        is 400 invalid_reset_token. The account's API keys keep working.

        POST /api/v1/auth/password-reset/confirm (operationId confirmPasswordReset)

        Args:
            body: A JSON object. token (str, required): The reset link's token.; password (str,
                required): 10 to 200 characters.

        Returns:
            The answer: JSON as dicts and lists, any other media type as text, None when empty.

        Raises:
            ProblemError: on an error answer; the codes it documents:
                400: invalid_request, malformed_json, invalid_reset_token
                413: payload_too_large
                415: unsupported_media_type
                429: ip_fence
                503: service_unavailable
        """
        return self._body(
            self.request(
                "POST",
                "/api/v1/auth/password-reset/confirm",
                body=body,
            )
        )

    def get_session(self) -> Any:
        """Whether the request carries a credential (a session cookie or a key): 200 either way

        For a page that wants to know who is there without a 401 for a signed-out visitor (GET
        /api/v1/me answers 401 then).

        GET /api/v1/auth/session (operationId getSession)

        Returns:
            The answer: JSON as dicts and lists, any other media type as text, None when empty.

        Raises:
            ProblemError: on an error answer; the codes it documents:
                400: invalid_request
                401: invalid_key, key_expired, key_revoked, invalid_session
                429: rate_limited, daily_limit, concurrency_limit, ip_fence
                503: service_unavailable
        """
        return self._body(
            self.request(
                "GET",
                "/api/v1/auth/session",
            )
        )

    def logout(self) -> Any:
        """End the current session

        POST /api/v1/auth/logout (operationId logout)

        Returns:
            The answer: JSON as dicts and lists, any other media type as text, None when empty.

        Raises:
            ProblemError: on an error answer; the codes it documents:
                400: invalid_request, malformed_json
                401: missing_credentials, invalid_key, key_expired, key_revoked, invalid_session
                403: forbidden
                413: payload_too_large
                415: unsupported_media_type
                429: rate_limited, daily_limit, concurrency_limit, ip_fence
                503: service_unavailable
        """
        return self._body(
            self.request(
                "POST",
                "/api/v1/auth/logout",
            )
        )

    def list_catalog(
        self,
        *,
        domain: str | None = None,
        free: str | None = None,
        max_cost: int | None = None,
        q: str | None = None,
    ) -> Any:
        """Every dataset key with its cost and P0 flag (free to call)

        GET /api/v1/catalog (operationId listCatalog)

        Args:
            domain: Only keys in this domain.
            free: true: only P0 keys (readable by free keys).
            max_cost: Only keys whose list cost is at most this (a whole number).
            q: Words that must each match a dataset: its key, title, description or field names, or
                an entity it holds (AAPL, DGS10). The best matches come first.

        Returns:
            The answer: JSON as dicts and lists, any other media type as text, None when empty.

        Raises:
            ProblemError: on an error answer; the codes it documents:
                400: invalid_request
                401: invalid_key, key_expired, key_revoked, invalid_session
                429: rate_limited, daily_limit, concurrency_limit, ip_fence
                503: service_unavailable
        """
        return self._body(
            self.request(
                "GET",
                "/api/v1/catalog",
                query={
                    "domain": domain,
                    "free": free,
                    "max_cost": max_cost,
                    "q": q,
                },
            )
        )

    def describe_dataset(
        self,
        domain: str,
        name: str,
    ) -> Any:
        """One dataset: fields, time field, entity filters, cost, P0 flag, aliases, an example read

        GET /api/v1/catalog/{domain}/{name} (operationId describeDataset)

        Args:
            domain: the path parameter domain
            name: the path parameter name

        Returns:
            The answer: JSON as dicts and lists, any other media type as text, None when empty.

        Raises:
            ProblemError: on an error answer; the codes it documents:
                400: invalid_request
                401: invalid_key, key_expired, key_revoked, invalid_session
                404: dataset_not_found
                429: rate_limited, daily_limit, concurrency_limit, ip_fence
                503: service_unavailable
        """
        return self._body(
            self.request(
                "GET",
                self._path("/api/v1/catalog/{domain}/{name}", domain=domain, name=name),
            )
        )

    def read_dataset(
        self,
        domain: str,
        name: str,
        *,
        from_: str | None = None,
        to: str | None = None,
        fields: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
        sort: str | None = None,
        start_date: str | None = None,
        end_date: str | None = None,
        order: str | None = None,
        format: str | None = None,
        filters: dict[str, str] | None = None,
        idempotency_key: str | None = None,
    ) -> Page:
        """Read a dataset page (metered: one request is one read, whatever the page size)

        Filters: any field of the dataset (see GET /api/v1/catalog/{domain}/{name}), comma-separated
        or repeated. Entity fields are indexed; any other filter is checked on at most 2000 stored
        rows per read, and meta.next_cursor then goes on with the scan even when the page is short.
        Sample data is marked in meta.sample and X-Data-Sample.

        GET /api/v1/data/{domain}/{name} (operationId readDataset)

        Args:
            domain: the path parameter domain
            name: the path parameter name
            from_: Earliest time, inclusive (alias: start_date).
            to: Latest time, inclusive for a date (alias: end_date).
            fields: Comma-separated field names to return; all fields when absent.
            limit: Rows per page, a whole number from 1 to 1000 (default 100). One request is one
                read, whatever the page size.
            cursor: Opaque cursor from meta.next_cursor of the previous page.
            sort: Order by the time field: desc (newest first, default) or asc.
            start_date: Alias of from.
            end_date: Alias of to.
            order: Alias of sort.
            format: json (default) or csv; Accept: text/csv also selects CSV. On a dataset with an
                entity field named format, it filters that field instead (use Accept for CSV).
            filters: Entity filters: each of the dataset's `entity_fields` (see `GET
                /api/v1/catalog/{domain}/{name}`, which lists its fields, types and an example read)
                as its own parameter, e.g. `symbol=AAPL,MSFT` or `symbol=AAPL&symbol=MSFT` (any of
                the values). A name that is neither an option above nor an entity field is 400
                invalid_request.
            idempotency_key: A key for this request (1 to 255 visible ASCII characters; a UUID will
                do): a retry with the same key, from the same credential within 24 hours, gets the
                first answer and is applied or charged once.

        Returns:
            A Page: its rows in ``data``, its ``meta`` (``next_cursor`` and the rest) and the
                response headers; other media types as text.

        Raises:
            ProblemError: on an error answer; the codes it documents:
                400: invalid_request, invalid_cursor
                401: missing_credentials, invalid_key, key_expired, key_revoked, invalid_session
                402: not_entitled, insufficient_tokens, spending_cap_reached
                404: dataset_not_found
                406: not_acceptable
                409: conflict
                422: idempotency_key_reused
                429: rate_limited, daily_limit, concurrency_limit, ip_fence
                503: service_unavailable
        """
        return self._page(
            self.request(
                "GET",
                self._path("/api/v1/data/{domain}/{name}", domain=domain, name=name),
                query={
                    "from": from_,
                    "to": to,
                    "fields": fields,
                    "limit": limit,
                    "cursor": cursor,
                    "sort": sort,
                    "start_date": start_date,
                    "end_date": end_date,
                    "order": order,
                    "format": format,
                    "filters": filters,
                },
                headers={
                    "Idempotency-Key": idempotency_key or new_idempotency_key(),
                },
            )
        )

    def iter_read_dataset(
        self,
        domain: str,
        name: str,
        *,
        from_: str | None = None,
        to: str | None = None,
        fields: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
        sort: str | None = None,
        start_date: str | None = None,
        end_date: str | None = None,
        order: str | None = None,
        format: str | None = None,
        filters: dict[str, str] | None = None,
    ) -> Pages:
        """Every page of read_dataset() from ``cursor`` (or the first) on, following
        ``meta.next_cursor``: one request per page, each with its own idempotency key.

        Takes the arguments of read_dataset(); iterate the result for pages, call .rows() for rows or
        .to_pandas() for one DataFrame of them all.
        """
        return Pages(
            lambda next_cursor: self.read_dataset(
                domain,
                name,
                from_=from_,
                to=to,
                fields=fields,
                limit=limit,
                sort=sort,
                start_date=start_date,
                end_date=end_date,
                order=order,
                format=format,
                filters=filters,
                cursor=next_cursor,
            ),
            cursor,
        )

    def estimate_cost(
        self,
        *,
        dataset: str | None = None,
        recipe: str | None = None,
    ) -> Any:
        """What one read of a dataset (or one recipe run) would cost you now, and whether it would
        be refused

        Free: reads and burns nothing. Priced for the calling credential and channel (a Terminal
        session pays the Terminal surcharge). Give exactly one of dataset or recipe.

        GET /api/v1/estimate (operationId estimateCost)

        Args:
            dataset: A dataset key, domain/name.
            recipe: A recipe name.

        Returns:
            The answer: JSON as dicts and lists, any other media type as text, None when empty.

        Raises:
            ProblemError: on an error answer; the codes it documents:
                400: invalid_request
                401: missing_credentials, invalid_key, key_expired, key_revoked, invalid_session
                404: dataset_not_found, recipe_not_found
                429: rate_limited, daily_limit, concurrency_limit, ip_fence
                503: service_unavailable
        """
        return self._body(
            self.request(
                "GET",
                "/api/v1/estimate",
                query={
                    "dataset": dataset,
                    "recipe": recipe,
                },
            )
        )

    def list_recipes(self) -> Any:
        """The recipes, what each reads and what it costs (free to call)

        GET /api/v1/recipes (operationId listRecipes)

        Returns:
            The answer: JSON as dicts and lists, any other media type as text, None when empty.

        Raises:
            ProblemError: on an error answer; the codes it documents:
                400: invalid_request
                401: invalid_key, key_expired, key_revoked, invalid_session
                429: rate_limited, daily_limit, concurrency_limit, ip_fence
                503: service_unavailable
        """
        return self._body(
            self.request(
                "GET",
                "/api/v1/recipes",
            )
        )

    def run_recipe(
        self,
        name: str,
        *,
        tz: str | None = None,
    ) -> Any:
        """Run a recipe (metered once: the sum of its reads list costs, discounted like any read)

        GET /api/v1/recipes/{name} (operationId runRecipe)

        Args:
            name: the path parameter name
            tz: calendar-tonight: IANA time zone (default America/New_York).

        Returns:
            The answer: JSON as dicts and lists, any other media type as text, None when empty.

        Raises:
            ProblemError: on an error answer; the codes it documents:
                400: invalid_request
                401: missing_credentials, invalid_key, key_expired, key_revoked, invalid_session
                402: not_entitled, insufficient_tokens, spending_cap_reached
                404: recipe_not_found
                406: not_acceptable
                429: rate_limited, daily_limit, concurrency_limit, ip_fence
                503: service_unavailable
        """
        return self._body(
            self.request(
                "GET",
                self._path("/api/v1/recipes/{name}", name=name),
                query={
                    "tz": tz,
                },
            )
        )

    def get_me(self) -> Any:
        """The calling credential: kind, account, expiry, balance, tier, burn this month, limits

        GET /api/v1/me (operationId getMe)

        Returns:
            The answer: JSON as dicts and lists, any other media type as text, None when empty.

        Raises:
            ProblemError: on an error answer; the codes it documents:
                400: invalid_request
                401: missing_credentials, invalid_key, key_expired, key_revoked, invalid_session
                429: rate_limited, daily_limit, concurrency_limit, ip_fence
                503: service_unavailable
        """
        return self._body(
            self.request(
                "GET",
                "/api/v1/me",
            )
        )

    def set_low_balance(
        self,
        body: dict[str, Any],
    ) -> Any:
        """Set (or clear, with null) the low-balance threshold: a read that takes the balance below
        it is notified once

        PUT /api/v1/me/low-balance (operationId setLowBalance)

        Args:
            body: A JSON object. tokens (Any, required): Tokens (an integer or a decimal string), or
                null for no notice.

        Returns:
            The answer: JSON as dicts and lists, any other media type as text, None when empty.

        Raises:
            ProblemError: on an error answer; the codes it documents:
                400: invalid_request, malformed_json
                401: missing_credentials, invalid_key, key_expired, key_revoked, invalid_session
                403: forbidden
                413: payload_too_large
                415: unsupported_media_type
                429: rate_limited, daily_limit, concurrency_limit, ip_fence
                503: service_unavailable
        """
        return self._body(
            self.request(
                "PUT",
                "/api/v1/me/low-balance",
                body=body,
            )
        )

    def get_my_usage(
        self,
        *,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> Page:
        """Usage events, newest first, with each cost (paged by cursor)

        GET /api/v1/me/usage (operationId getMyUsage)

        Args:
            limit: Events per page, 1 to 500 (default 50).
            cursor: meta.next_cursor of the previous page.

        Returns:
            A Page: its rows in ``data``, its ``meta`` (``next_cursor`` and the rest) and the
                response headers; other media types as text.

        Raises:
            ProblemError: on an error answer; the codes it documents:
                400: invalid_request, invalid_cursor
                401: missing_credentials, invalid_key, key_expired, key_revoked, invalid_session
                429: rate_limited, daily_limit, concurrency_limit, ip_fence
                503: service_unavailable
        """
        return self._page(
            self.request(
                "GET",
                "/api/v1/me/usage",
                query={
                    "limit": limit,
                    "cursor": cursor,
                },
            )
        )

    def iter_get_my_usage(
        self,
        *,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> Pages:
        """Every page of get_my_usage() from ``cursor`` (or the first) on, following
        ``meta.next_cursor``: one request per page.

        Takes the arguments of get_my_usage(); iterate the result for pages, call .rows() for rows or
        .to_pandas() for one DataFrame of them all.
        """
        return Pages(
            lambda next_cursor: self.get_my_usage(
                limit=limit,
                cursor=next_cursor,
            ),
            cursor,
        )

    def create_key(
        self,
        body: dict[str, Any],
    ) -> Any:
        """Create a wallet-backed live key for the account (shown once)

        POST /api/v1/keys (operationId createKey)

        Args:
            body: A JSON object. name (str); expires_at (str): Optional expiry, an ISO 8601 time
                with Z or an offset (2027-01-01T00:00:00+01:00); never by default.

        Returns:
            The answer: JSON as dicts and lists, any other media type as text, None when empty.

        Raises:
            ProblemError: on an error answer; the codes it documents:
                400: invalid_request, malformed_json
                401: missing_credentials, invalid_key, key_expired, key_revoked, invalid_session
                403: forbidden
                413: payload_too_large
                415: unsupported_media_type
                429: rate_limited, daily_limit, concurrency_limit, ip_fence
                503: service_unavailable
        """
        return self._body(
            self.request(
                "POST",
                "/api/v1/keys",
                body=body,
            )
        )

    def list_keys(self) -> Any:
        """List the account keys (never the key strings)

        GET /api/v1/keys (operationId listKeys)

        Returns:
            The answer: JSON as dicts and lists, any other media type as text, None when empty.

        Raises:
            ProblemError: on an error answer; the codes it documents:
                400: invalid_request
                401: missing_credentials, invalid_key, key_expired, key_revoked, invalid_session
                403: forbidden
                429: rate_limited, daily_limit, concurrency_limit, ip_fence
                503: service_unavailable
        """
        return self._body(
            self.request(
                "GET",
                "/api/v1/keys",
            )
        )

    def set_key_spending_caps(
        self,
        id: str,
        body: dict[str, Any],
    ) -> Any:
        """Set or clear the spending caps of a live key (Partner package)

        Caps the tokens the key may burn per UTC day and per UTC month; null removes a cap, an
        absent field leaves it as it is. A read that would take the key past a cap is refused with
        402 spending_cap_reached and reset_at.

        PATCH /api/v1/keys/{id} (operationId setKeySpendingCaps)

        Args:
            id: the path parameter id
            body: A JSON object. daily_tokens (Any): Tokens per UTC day, or null for no cap.;
                monthly_tokens (Any): Tokens per UTC month, or null for no cap.

        Returns:
            The answer: JSON as dicts and lists, any other media type as text, None when empty.

        Raises:
            ProblemError: on an error answer; the codes it documents:
                400: invalid_request, malformed_json
                401: missing_credentials, invalid_key, key_expired, key_revoked, invalid_session
                403: forbidden
                404: not_found
                409: conflict
                413: payload_too_large
                415: unsupported_media_type
                429: rate_limited, daily_limit, concurrency_limit, ip_fence
                503: service_unavailable
        """
        return self._body(
            self.request(
                "PATCH",
                self._path("/api/v1/keys/{id}", id=id),
                body=body,
            )
        )

    def revoke_key(
        self,
        id: str,
    ) -> Any:
        """Revoke a key of the account; it stops working at once

        DELETE /api/v1/keys/{id} (operationId revokeKey)

        Args:
            id: the path parameter id

        Returns:
            The answer: JSON as dicts and lists, any other media type as text, None when empty.

        Raises:
            ProblemError: on an error answer; the codes it documents:
                400: invalid_request, malformed_json
                401: missing_credentials, invalid_key, key_expired, key_revoked, invalid_session
                403: forbidden
                404: not_found
                413: payload_too_large
                415: unsupported_media_type
                429: rate_limited, daily_limit, concurrency_limit, ip_fence
                503: service_unavailable
        """
        return self._body(
            self.request(
                "DELETE",
                self._path("/api/v1/keys/{id}", id=id),
            )
        )

    def get_pending_connection(
        self,
        uid: str,
    ) -> Any:
        """A pending MCP sign-in: the client asking, where it returns to

        GET /api/v1/connect/{uid} (operationId getPendingConnection)

        Args:
            uid: the path parameter uid

        Returns:
            The answer: JSON as dicts and lists, any other media type as text, None when empty.

        Raises:
            ProblemError: on an error answer; the codes it documents:
                400: invalid_request
                401: missing_credentials, invalid_key, key_expired, key_revoked, invalid_session
                403: forbidden
                404: not_found
                429: rate_limited, daily_limit, concurrency_limit, ip_fence
                503: service_unavailable
        """
        return self._body(
            self.request(
                "GET",
                self._path("/api/v1/connect/{uid}", uid=uid),
            )
        )

    def approve_connection(
        self,
        uid: str,
        body: dict[str, Any],
    ) -> Any:
        """Approve a pending MCP sign-in with its spending caps

        Creates the connection: the client reads as a key of this account (API prices, the account
        tier, package and limits) within the caps given here. Revoke it on the Keys page (DELETE
        /api/v1/keys/{id}).

        POST /api/v1/connect/{uid}/approve (operationId approveConnection)

        Args:
            uid: the path parameter uid
            body: A JSON object. daily_tokens (Any): Tokens per UTC day, or null (or absent) for no
                cap.; monthly_tokens (Any): Tokens per UTC month, or null (or absent) for no cap.

        Returns:
            The answer: JSON as dicts and lists, any other media type as text, None when empty.

        Raises:
            ProblemError: on an error answer; the codes it documents:
                400: invalid_request, malformed_json
                401: missing_credentials, invalid_key, key_expired, key_revoked, invalid_session
                403: forbidden
                404: not_found
                413: payload_too_large
                415: unsupported_media_type
                429: rate_limited, daily_limit, concurrency_limit, ip_fence
                503: service_unavailable
        """
        return self._body(
            self.request(
                "POST",
                self._path("/api/v1/connect/{uid}/approve", uid=uid),
                body=body,
            )
        )

    def deny_connection(
        self,
        uid: str,
    ) -> Any:
        """Decline a pending MCP sign-in; the client is told access_denied

        POST /api/v1/connect/{uid}/deny (operationId denyConnection)

        Args:
            uid: the path parameter uid

        Returns:
            The answer: JSON as dicts and lists, any other media type as text, None when empty.

        Raises:
            ProblemError: on an error answer; the codes it documents:
                400: invalid_request, malformed_json
                401: missing_credentials, invalid_key, key_expired, key_revoked, invalid_session
                403: forbidden
                404: not_found
                413: payload_too_large
                415: unsupported_media_type
                429: rate_limited, daily_limit, concurrency_limit, ip_fence
                503: service_unavailable
        """
        return self._body(
            self.request(
                "POST",
                self._path("/api/v1/connect/{uid}/deny", uid=uid),
            )
        )

    def list_connections(self) -> Any:
        """The account's MCP connections (OAuth clients), newest first

        GET /api/v1/connections (operationId listConnections)

        Returns:
            The answer: JSON as dicts and lists, any other media type as text, None when empty.

        Raises:
            ProblemError: on an error answer; the codes it documents:
                400: invalid_request
                401: missing_credentials, invalid_key, key_expired, key_revoked, invalid_session
                403: forbidden
                429: rate_limited, daily_limit, concurrency_limit, ip_fence
                503: service_unavailable
        """
        return self._body(
            self.request(
                "GET",
                "/api/v1/connections",
            )
        )

    def export_dataset(
        self,
        domain: str,
        name: str,
        *,
        format: str | None = None,
    ) -> Any:
        """Export a whole dataset as NDJSON or CSV (packages with bulk_export)

        For live keys and sessions of accounts whose package has bulk_export (Pro, Workbench,
        Partner); 403 for everyone else. Charged once, before the stream starts: ceil(rows / 1000)
        (at least 1) times the dataset's list cost, discounted and surcharged like any read; the
        cost headers and X-Export-Rows are set before the first row. Rows come oldest first.

        GET /api/v1/export/{domain}/{name} (operationId exportDataset)

        Args:
            domain: the path parameter domain
            name: the path parameter name
            format: ndjson (default: one JSON object per line) or csv; Accept: text/csv also selects
                CSV.

        Returns:
            The answer: JSON as dicts and lists, any other media type as text, None when empty.

        Raises:
            ProblemError: on an error answer; the codes it documents:
                400: invalid_request
                401: missing_credentials, invalid_key, key_expired, key_revoked, invalid_session
                402: insufficient_tokens, spending_cap_reached
                403: forbidden
                404: dataset_not_found
                406: not_acceptable
                429: rate_limited, daily_limit, concurrency_limit, ip_fence
                503: service_unavailable
        """
        return self._body(
            self.request(
                "GET",
                self._path("/api/v1/export/{domain}/{name}", domain=domain, name=name),
                query={
                    "format": format,
                },
            )
        )

    def list_token_packs(self) -> Any:
        """Token packs for sale, and whether they are paid by card here (else requested)

        GET /api/v1/billing/token-packs (operationId listTokenPacks)

        Returns:
            The answer: JSON as dicts and lists, any other media type as text, None when empty.

        Raises:
            ProblemError: on an error answer; the codes it documents:
                400: invalid_request
                401: invalid_key, key_expired, key_revoked, invalid_session
                429: rate_limited, daily_limit, concurrency_limit, ip_fence
                503: service_unavailable
        """
        return self._body(
            self.request(
                "GET",
                "/api/v1/billing/token-packs",
            )
        )

    def checkout_token_pack(
        self,
        id: str,
    ) -> Any:
        """A Stripe Checkout session for a pack: pay on Stripe's page; the tokens are credited when
        Stripe confirms

        POST /api/v1/billing/token-packs/{id}/checkout (operationId checkoutTokenPack)

        Args:
            id: the path parameter id

        Returns:
            The answer: JSON as dicts and lists, any other media type as text, None when empty.

        Raises:
            ProblemError: on an error answer; the codes it documents:
                400: invalid_request
                401: missing_credentials, invalid_key, key_expired, key_revoked, invalid_session
                403: forbidden
                404: not_found
                429: rate_limited, daily_limit, concurrency_limit, ip_fence
                501: not_live
                503: service_unavailable
        """
        return self._body(
            self.request(
                "POST",
                self._path("/api/v1/billing/token-packs/{id}/checkout", id=id),
            )
        )

    def list_my_purchases(self) -> Any:
        """The account's token purchases, newest first, with receipts

        GET /api/v1/me/purchases (operationId listMyPurchases)

        Returns:
            The answer: JSON as dicts and lists, any other media type as text, None when empty.

        Raises:
            ProblemError: on an error answer; the codes it documents:
                400: invalid_request
                401: missing_credentials, invalid_key, key_expired, key_revoked, invalid_session
                403: forbidden
                429: rate_limited, daily_limit, concurrency_limit, ip_fence
                503: service_unavailable
        """
        return self._body(
            self.request(
                "GET",
                "/api/v1/me/purchases",
            )
        )

    def request_tokens(
        self,
        body: dict[str, Any],
    ) -> Any:
        """Ask for a token pack without a card: an operator credits or declines the request

        POST /api/v1/billing/token-requests (operationId requestTokens)

        Args:
            body: A JSON object. pack (str, required); note (str): For the operator: an invoice
                reference, a purchase order.

        Returns:
            The answer: JSON as dicts and lists, any other media type as text, None when empty.

        Raises:
            ProblemError: on an error answer; the codes it documents:
                400: invalid_request, malformed_json
                401: missing_credentials, invalid_key, key_expired, key_revoked, invalid_session
                403: forbidden
                404: not_found
                409: conflict
                413: payload_too_large
                415: unsupported_media_type
                429: rate_limited, daily_limit, concurrency_limit, ip_fence
                503: service_unavailable
        """
        return self._body(
            self.request(
                "POST",
                "/api/v1/billing/token-requests",
                body=body,
            )
        )

    def list_my_token_requests(self) -> Any:
        """The account's token requests and their state, newest first

        GET /api/v1/me/token-requests (operationId listMyTokenRequests)

        Returns:
            The answer: JSON as dicts and lists, any other media type as text, None when empty.

        Raises:
            ProblemError: on an error answer; the codes it documents:
                400: invalid_request
                401: missing_credentials, invalid_key, key_expired, key_revoked, invalid_session
                403: forbidden
                429: rate_limited, daily_limit, concurrency_limit, ip_fence
                503: service_unavailable
        """
        return self._body(
            self.request(
                "GET",
                "/api/v1/me/token-requests",
            )
        )

    def list_analyses(self) -> Any:
        """The account's saved analyses, the most recently changed first

        GET /api/v1/analyses (operationId listAnalyses)

        Returns:
            The answer: JSON as dicts and lists, any other media type as text, None when empty.

        Raises:
            ProblemError: on an error answer; the codes it documents:
                400: invalid_request
                401: missing_credentials, invalid_key, key_expired, key_revoked, invalid_session
                403: analysis_not_entitled
                429: rate_limited, daily_limit, concurrency_limit, ip_fence
                503: service_unavailable
        """
        return self._body(
            self.request(
                "GET",
                "/api/v1/analyses",
            )
        )

    def create_analysis(
        self,
        body: dict[str, Any],
    ) -> Any:
        """Save a new analysis: series, steps and outputs (checked against the catalog; nothing is
        read)

        POST /api/v1/analyses (operationId createAnalysis)

        Args:
            body: A JSON object. name (str, required); spec (dict[str, Any], required).

        Returns:
            The answer: JSON as dicts and lists, any other media type as text, None when empty.

        Raises:
            ProblemError: on an error answer; the codes it documents:
                400: invalid_request, malformed_json
                401: missing_credentials, invalid_key, key_expired, key_revoked, invalid_session
                403: analysis_not_entitled
                404: dataset_not_found
                413: payload_too_large
                415: unsupported_media_type
                429: rate_limited, daily_limit, concurrency_limit, ip_fence
                503: service_unavailable
        """
        return self._body(
            self.request(
                "POST",
                "/api/v1/analyses",
                body=body,
            )
        )

    def estimate_analysis_spec(
        self,
        body: dict[str, Any],
    ) -> Any:
        """What running an unsaved analysis would read and cost now (free: nothing is read)

        POST /api/v1/analyses/estimate (operationId estimateAnalysisSpec)

        Args:
            body: A JSON object. spec (dict[str, Any], required).

        Returns:
            The answer: JSON as dicts and lists, any other media type as text, None when empty.

        Raises:
            ProblemError: on an error answer; the codes it documents:
                400: invalid_request, malformed_json
                401: missing_credentials, invalid_key, key_expired, key_revoked, invalid_session
                403: analysis_not_entitled
                404: dataset_not_found
                413: payload_too_large
                415: unsupported_media_type
                429: rate_limited, daily_limit, concurrency_limit, ip_fence
                503: service_unavailable
        """
        return self._body(
            self.request(
                "POST",
                "/api/v1/analyses/estimate",
                body=body,
            )
        )

    def get_analysis(
        self,
        id: str,
    ) -> Any:
        """One analysis

        GET /api/v1/analyses/{id} (operationId getAnalysis)

        Args:
            id: the path parameter id

        Returns:
            The answer: JSON as dicts and lists, any other media type as text, None when empty.

        Raises:
            ProblemError: on an error answer; the codes it documents:
                400: invalid_request
                401: missing_credentials, invalid_key, key_expired, key_revoked, invalid_session
                403: analysis_not_entitled
                404: not_found
                429: rate_limited, daily_limit, concurrency_limit, ip_fence
                503: service_unavailable
        """
        return self._body(
            self.request(
                "GET",
                self._path("/api/v1/analyses/{id}", id=id),
            )
        )

    def update_analysis(
        self,
        id: str,
        body: dict[str, Any],
    ) -> Any:
        """Rename an analysis and/or replace its steps

        PATCH /api/v1/analyses/{id} (operationId updateAnalysis)

        Args:
            id: the path parameter id
            body: A JSON object. name (str); spec (dict[str, Any]).

        Returns:
            The answer: JSON as dicts and lists, any other media type as text, None when empty.

        Raises:
            ProblemError: on an error answer; the codes it documents:
                400: invalid_request, malformed_json
                401: missing_credentials, invalid_key, key_expired, key_revoked, invalid_session
                403: analysis_not_entitled
                404: not_found, dataset_not_found
                413: payload_too_large
                415: unsupported_media_type
                429: rate_limited, daily_limit, concurrency_limit, ip_fence
                503: service_unavailable
        """
        return self._body(
            self.request(
                "PATCH",
                self._path("/api/v1/analyses/{id}", id=id),
                body=body,
            )
        )

    def delete_analysis(
        self,
        id: str,
    ) -> Any:
        """Delete an analysis (its runs still count toward the day’s fair use)

        DELETE /api/v1/analyses/{id} (operationId deleteAnalysis)

        Args:
            id: the path parameter id

        Returns:
            The answer: JSON as dicts and lists, any other media type as text, None when empty.

        Raises:
            ProblemError: on an error answer; the codes it documents:
                400: invalid_request
                401: missing_credentials, invalid_key, key_expired, key_revoked, invalid_session
                403: analysis_not_entitled
                404: not_found
                429: rate_limited, daily_limit, concurrency_limit, ip_fence
                503: service_unavailable
        """
        return self._body(
            self.request(
                "DELETE",
                self._path("/api/v1/analyses/{id}", id=id),
            )
        )

    def duplicate_analysis(
        self,
        id: str,
        body: dict[str, Any],
    ) -> Any:
        """Copy an analysis under a new name (default: "<name> (copy)")

        POST /api/v1/analyses/{id}/duplicate (operationId duplicateAnalysis)

        Args:
            id: the path parameter id
            body: A JSON object. name (str).

        Returns:
            The answer: JSON as dicts and lists, any other media type as text, None when empty.

        Raises:
            ProblemError: on an error answer; the codes it documents:
                400: invalid_request, malformed_json
                401: missing_credentials, invalid_key, key_expired, key_revoked, invalid_session
                403: analysis_not_entitled
                404: not_found
                413: payload_too_large
                415: unsupported_media_type
                429: rate_limited, daily_limit, concurrency_limit, ip_fence
                503: service_unavailable
        """
        return self._body(
            self.request(
                "POST",
                self._path("/api/v1/analyses/{id}/duplicate", id=id),
                body=body,
            )
        )

    def estimate_analysis(
        self,
        id: str,
    ) -> Any:
        """What a run would read and cost now, each read at your price, and what would refuse it
        (free)

        GET /api/v1/analyses/{id}/estimate (operationId estimateAnalysis)

        Args:
            id: the path parameter id

        Returns:
            The answer: JSON as dicts and lists, any other media type as text, None when empty.

        Raises:
            ProblemError: on an error answer; the codes it documents:
                400: invalid_request
                401: missing_credentials, invalid_key, key_expired, key_revoked, invalid_session
                403: analysis_not_entitled
                404: not_found, dataset_not_found
                429: rate_limited, daily_limit, concurrency_limit, ip_fence
                503: service_unavailable
        """
        return self._body(
            self.request(
                "GET",
                self._path("/api/v1/analyses/{id}/estimate", id=id),
            )
        )

    def run_analysis(
        self,
        id: str,
        body: dict[str, Any],
    ) -> Any:
        """Run an analysis: one metered read per series, then its steps and outputs

        Each series is one ordinary metered read (its ledger entry and usage event carry the request
        id shown per read). A rerun with unchanged inputs within the package’s reuse_minutes returns
        the result already paid for and says so in reused_from; send {"fresh": true} to read again.

        POST /api/v1/analyses/{id}/run (operationId runAnalysis)

        Args:
            id: the path parameter id
            body: A JSON object. fresh (bool).

        Returns:
            The answer: JSON as dicts and lists, any other media type as text, None when empty.

        Raises:
            ProblemError: on an error answer; the codes it documents:
                400: invalid_request, malformed_json
                401: missing_credentials, invalid_key, key_expired, key_revoked, invalid_session
                402: insufficient_tokens, spending_cap_reached
                403: analysis_not_entitled
                404: not_found, dataset_not_found
                413: payload_too_large
                415: unsupported_media_type
                429: rate_limited, daily_limit, concurrency_limit, ip_fence, fair_use_limit
                503: service_unavailable
        """
        return self._body(
            self.request(
                "POST",
                self._path("/api/v1/analyses/{id}/run", id=id),
                body=body,
            )
        )

    def export_analysis_result(
        self,
        id: str,
    ) -> Any:
        """The latest result of an analysis as CSV (free: nothing is read)

        GET /api/v1/analyses/{id}/result.csv (operationId exportAnalysisResult)

        Args:
            id: the path parameter id

        Returns:
            The answer: JSON as dicts and lists, any other media type as text, None when empty.

        Raises:
            ProblemError: on an error answer; the codes it documents:
                400: invalid_request
                401: missing_credentials, invalid_key, key_expired, key_revoked, invalid_session
                403: analysis_not_entitled
                404: not_found
                429: rate_limited, daily_limit, concurrency_limit, ip_fence
                503: service_unavailable
        """
        return self._body(
            self.request(
                "GET",
                self._path("/api/v1/analyses/{id}/result.csv", id=id),
            )
        )

    def ask_assistant(
        self,
        body: dict[str, Any],
    ) -> Any:
        """Ask the analysis assistant a question: it answers with a run analysis (saved only with
        save: true) or asks back

        The built-in planner answers unless the operator configured a chat-completions model
        (ASSISTANT_URL); `planner` says which answered. The reads it makes are ordinary metered
        reads at your price. A question asked back or declined (a forecast, a ranking) charges
        nothing and does not count as a run of the day.

        POST /api/v1/assistant/ask (operationId askAssistant)

        Args:
            body: A JSON object. question (str, required); save (bool): Save the answer as an
                analysis of the account (default false: saved only on request).

        Returns:
            The answer: JSON as dicts and lists, any other media type as text, None when empty.

        Raises:
            ProblemError: on an error answer; the codes it documents:
                400: invalid_request, malformed_json
                401: missing_credentials, invalid_key, key_expired, key_revoked, invalid_session
                402: insufficient_tokens, spending_cap_reached
                403: analysis_not_entitled
                404: dataset_not_found
                413: payload_too_large
                415: unsupported_media_type
                429: rate_limited, daily_limit, concurrency_limit, ip_fence, fair_use_limit
                503: service_unavailable
        """
        return self._body(
            self.request(
                "POST",
                "/api/v1/assistant/ask",
                body=body,
            )
        )

    def estimate_assistant_question(
        self,
        body: dict[str, Any],
    ) -> Any:
        """What asking a question would read and cost now, at your price (free: nothing is read)

        Plans the question as ask would and prices its reads like an analysis estimate, without
        reading, charging or counting a run. A question that would be asked back or declined is
        answered as ask would answer it; with a chat model configured the cost is known only once it
        answers (`unavailable`).

        POST /api/v1/assistant/estimate (operationId estimateAssistantQuestion)

        Args:
            body: A JSON object. question (str, required).

        Returns:
            The answer: JSON as dicts and lists, any other media type as text, None when empty.

        Raises:
            ProblemError: on an error answer; the codes it documents:
                400: invalid_request, malformed_json
                401: missing_credentials, invalid_key, key_expired, key_revoked, invalid_session
                403: analysis_not_entitled
                404: dataset_not_found
                413: payload_too_large
                415: unsupported_media_type
                429: rate_limited, daily_limit, concurrency_limit, ip_fence
                503: service_unavailable
        """
        return self._body(
            self.request(
                "POST",
                "/api/v1/assistant/estimate",
                body=body,
            )
        )

    def admin_create_account(
        self,
        body: dict[str, Any],
    ) -> Any:
        """Create a login account (no signup grant; credit it explicitly)

        POST /api/v1/admin/accounts (operationId adminCreateAccount)

        Args:
            body: A JSON object. email (str, required); password (str).

        Returns:
            The answer: JSON as dicts and lists, any other media type as text, None when empty.

        Raises:
            ProblemError: on an error answer; the codes it documents:
                400: invalid_request, malformed_json
                401: missing_credentials, invalid_admin_token
                403: forbidden
                409: conflict
                413: payload_too_large
                415: unsupported_media_type
                429: ip_fence
                503: service_unavailable
        """
        return self._body(
            self.request(
                "POST",
                "/api/v1/admin/accounts",
                body=body,
            )
        )

    def admin_get_account(
        self,
        id: str,
    ) -> Any:
        """An account: plan, package, entitlements, balance and keys

        GET /api/v1/admin/accounts/{id} (operationId adminGetAccount)

        Args:
            id: Account id (acc_…) or email.

        Returns:
            The answer: JSON as dicts and lists, any other media type as text, None when empty.

        Raises:
            ProblemError: on an error answer; the codes it documents:
                400: invalid_request
                401: missing_credentials, invalid_admin_token
                403: forbidden
                404: not_found
                429: ip_fence
                503: service_unavailable
        """
        return self._body(
            self.request(
                "GET",
                self._path("/api/v1/admin/accounts/{id}", id=id),
            )
        )

    def admin_assign_package(
        self,
        id: str,
        body: dict[str, Any],
    ) -> Any:
        """Assign a package (credits this month's monthly_credits once) or clear it with null

        PUT /api/v1/admin/accounts/{id}/package (operationId adminAssignPackage)

        Args:
            id: Account id (acc_…) or email.
            body: A JSON object. package (Any, required).

        Returns:
            The answer: JSON as dicts and lists, any other media type as text, None when empty.

        Raises:
            ProblemError: on an error answer; the codes it documents:
                400: invalid_request, malformed_json
                401: missing_credentials, invalid_admin_token
                403: forbidden
                404: not_found
                413: payload_too_large
                415: unsupported_media_type
                429: ip_fence
                503: service_unavailable
        """
        return self._body(
            self.request(
                "PUT",
                self._path("/api/v1/admin/accounts/{id}/package", id=id),
                body=body,
            )
        )

    def admin_set_early_bird(
        self,
        id: str,
        body: dict[str, Any],
    ) -> Any:
        """Set or clear the early_bird plan (only for accounts created before the cohort cutoff)

        PUT /api/v1/admin/accounts/{id}/early-bird (operationId adminSetEarlyBird)

        Args:
            id: Account id (acc_…) or email.
            body: A JSON object. early_bird (bool, required).

        Returns:
            The answer: JSON as dicts and lists, any other media type as text, None when empty.

        Raises:
            ProblemError: on an error answer; the codes it documents:
                400: invalid_request, malformed_json
                401: missing_credentials, invalid_admin_token
                403: forbidden
                404: not_found
                409: conflict
                413: payload_too_large
                415: unsupported_media_type
                429: ip_fence
                503: service_unavailable
        """
        return self._body(
            self.request(
                "PUT",
                self._path("/api/v1/admin/accounts/{id}/early-bird", id=id),
                body=body,
            )
        )

    def admin_credit_tokens(
        self,
        id: str,
        body: dict[str, Any],
        *,
        idempotency_key: str,
    ) -> Any:
        """Credit tokens to the account wallet (Idempotency-Key required; a repeat returns the same
        entry)

        The first request answers 201; a repeat with the same Idempotency-Key answers 200 with the
        same entry and Idempotent-Replayed: true. The same key with another amount or kind is 409
        conflict.

        POST /api/v1/admin/accounts/{id}/credits (operationId adminCreditTokens)

        Args:
            id: Account id (acc_…) or email.
            body: A JSON object. tokens (Any, required): Tokens to credit: an integer or a decimal
                string (at most 6 decimals).; kind (str); memo (str).
            idempotency_key: A key for this request (1 to 255 visible ASCII characters; a UUID will
                do): a retry with the same key, from the same credential within 24 hours, gets the
                first answer and is applied or charged once.

        Returns:
            The answer: JSON as dicts and lists, any other media type as text, None when empty.

        Raises:
            ProblemError: on an error answer; the codes it documents:
                400: invalid_request, malformed_json
                401: missing_credentials, invalid_admin_token
                403: forbidden
                404: not_found
                409: conflict
                413: payload_too_large
                415: unsupported_media_type
                429: ip_fence
                503: service_unavailable
        """
        return self._body(
            self.request(
                "POST",
                self._path("/api/v1/admin/accounts/{id}/credits", id=id),
                body=body,
                headers={
                    "Idempotency-Key": idempotency_key,
                },
            )
        )

    def admin_run_monthly_credits(self) -> Any:
        """Run the monthly credit job now (idempotent: each account's package is credited once a
        month)

        POST /api/v1/admin/monthly-credits (operationId adminRunMonthlyCredits)

        Returns:
            The answer: JSON as dicts and lists, any other media type as text, None when empty.

        Raises:
            ProblemError: on an error answer; the codes it documents:
                400: invalid_request, malformed_json
                401: missing_credentials, invalid_admin_token
                403: forbidden
                413: payload_too_large
                415: unsupported_media_type
                429: ip_fence
                503: service_unavailable
        """
        return self._body(
            self.request(
                "POST",
                "/api/v1/admin/monthly-credits",
            )
        )

    def admin_create_key(
        self,
        id: str,
        body: dict[str, Any],
    ) -> Any:
        """Create a live key for the account (shown once)

        POST /api/v1/admin/accounts/{id}/keys (operationId adminCreateKey)

        Args:
            id: Account id (acc_…) or email.
            body: A JSON object. name (str); expires_at (str): Optional expiry, an ISO 8601 time
                with Z or an offset (2027-01-01T00:00:00+01:00); never by default.

        Returns:
            The answer: JSON as dicts and lists, any other media type as text, None when empty.

        Raises:
            ProblemError: on an error answer; the codes it documents:
                400: invalid_request, malformed_json
                401: missing_credentials, invalid_admin_token
                403: forbidden
                404: not_found
                413: payload_too_large
                415: unsupported_media_type
                429: ip_fence
                503: service_unavailable
        """
        return self._body(
            self.request(
                "POST",
                self._path("/api/v1/admin/accounts/{id}/keys", id=id),
                body=body,
            )
        )

    def admin_set_key_spending_caps(
        self,
        id: str,
        body: dict[str, Any],
    ) -> Any:
        """Set or clear the spending caps of a live key (tokens per UTC day and month)

        PUT /api/v1/admin/keys/{id}/spending-caps (operationId adminSetKeySpendingCaps)

        Args:
            id: the path parameter id
            body: A JSON object. daily_tokens (Any, required): Tokens per UTC day, or null for no
                cap.; monthly_tokens (Any, required): Tokens per UTC month, or null for no cap.

        Returns:
            The answer: JSON as dicts and lists, any other media type as text, None when empty.

        Raises:
            ProblemError: on an error answer; the codes it documents:
                400: invalid_request, malformed_json
                401: missing_credentials, invalid_admin_token
                403: forbidden
                404: not_found
                409: conflict
                413: payload_too_large
                415: unsupported_media_type
                429: ip_fence
                503: service_unavailable
        """
        return self._body(
            self.request(
                "PUT",
                self._path("/api/v1/admin/keys/{id}/spending-caps", id=id),
                body=body,
            )
        )

    def admin_list_collectors(self) -> Any:
        """Every collector source: last success, next run, lag, failures, last error, cursor

        GET /api/v1/admin/collectors (operationId adminListCollectors)

        Returns:
            The answer: JSON as dicts and lists, any other media type as text, None when empty.

        Raises:
            ProblemError: on an error answer; the codes it documents:
                400: invalid_request
                401: missing_credentials, invalid_admin_token
                403: forbidden
                429: ip_fence
                503: service_unavailable
        """
        return self._body(
            self.request(
                "GET",
                "/api/v1/admin/collectors",
            )
        )

    def admin_run_collector(
        self,
        source: str,
        body: dict[str, Any],
    ) -> Any:
        """Run a collector source now and answer with its run (a failed run is 200 with its error)

        POST /api/v1/admin/collectors/{source}/runs (operationId adminRunCollector)

        Args:
            source: the path parameter source
            body: A JSON object. since (str): Ask from this date (a backfill window).; backfill
                (bool): From the source's earliest date when it has no cursor.

        Returns:
            The answer: JSON as dicts and lists, any other media type as text, None when empty.

        Raises:
            ProblemError: on an error answer; the codes it documents:
                400: invalid_request, malformed_json
                401: missing_credentials, invalid_admin_token
                403: forbidden
                404: not_found
                413: payload_too_large
                415: unsupported_media_type
                429: ip_fence
                503: service_unavailable
        """
        return self._body(
            self.request(
                "POST",
                self._path("/api/v1/admin/collectors/{source}/runs", source=source),
                body=body,
            )
        )

    def admin_list_token_requests(self) -> Any:
        """Open token requests, newest first

        GET /api/v1/admin/token-requests (operationId adminListTokenRequests)

        Returns:
            The answer: JSON as dicts and lists, any other media type as text, None when empty.

        Raises:
            ProblemError: on an error answer; the codes it documents:
                400: invalid_request
                401: missing_credentials, invalid_admin_token
                403: forbidden
                429: ip_fence
                503: service_unavailable
        """
        return self._body(
            self.request(
                "GET",
                "/api/v1/admin/token-requests",
            )
        )

    def admin_credit_token_request(
        self,
        id: str,
    ) -> Any:
        """Credit a token request's tokens (once: the request id is the ledger entry's idempotency
        key)

        POST /api/v1/admin/token-requests/{id}/credit (operationId adminCreditTokenRequest)

        Args:
            id: the path parameter id

        Returns:
            The answer: JSON as dicts and lists, any other media type as text, None when empty.

        Raises:
            ProblemError: on an error answer; the codes it documents:
                400: invalid_request
                401: missing_credentials, invalid_admin_token
                403: forbidden
                404: not_found
                409: conflict
                429: ip_fence
                503: service_unavailable
        """
        return self._body(
            self.request(
                "POST",
                self._path("/api/v1/admin/token-requests/{id}/credit", id=id),
            )
        )

    def admin_decline_token_request(
        self,
        id: str,
        body: dict[str, Any],
    ) -> Any:
        """Decline a token request, with the reason the account will see

        POST /api/v1/admin/token-requests/{id}/decline (operationId adminDeclineTokenRequest)

        Args:
            id: the path parameter id
            body: A JSON object. reason (str, required).

        Returns:
            The answer: JSON as dicts and lists, any other media type as text, None when empty.

        Raises:
            ProblemError: on an error answer; the codes it documents:
                400: invalid_request, malformed_json
                401: missing_credentials, invalid_admin_token
                403: forbidden
                404: not_found
                409: conflict
                413: payload_too_large
                415: unsupported_media_type
                429: ip_fence
                503: service_unavailable
        """
        return self._body(
            self.request(
                "POST",
                self._path("/api/v1/admin/token-requests/{id}/decline", id=id),
                body=body,
            )
        )

    def get_my_prices(self) -> Any:
        """Every dataset priced for you now: from the Terminal and by API key, and whether you may
        read it

        Free. The tier discount is the one your burn this month earns; the Terminal price adds the
        35% surcharge after it. A read costs exactly these figures (GET /api/v1/estimate gives one
        read with your balance and any refusal).

        GET /api/v1/me/prices (operationId getMyPrices)

        Returns:
            The answer: JSON as dicts and lists, any other media type as text, None when empty.

        Raises:
            ProblemError: on an error answer; the codes it documents:
                400: invalid_request
                401: missing_credentials, invalid_key, key_expired, key_revoked, invalid_session
                429: rate_limited, daily_limit, concurrency_limit, ip_fence
                503: service_unavailable
        """
        return self._body(
            self.request(
                "GET",
                "/api/v1/me/prices",
            )
        )

    def get_my_ledger(
        self,
        *,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> Page:
        """The wallet's ledger entries, newest first, with the running balance (paged by cursor)

        Every change of the balance is an append-only entry: grant, topup, monthly_credit, burn,
        refund, adjustment. The balance always equals the sum of the entries.

        GET /api/v1/me/ledger (operationId getMyLedger)

        Args:
            limit: Entries per page, 1 to 500 (default 50).
            cursor: meta.next_cursor of the previous page.

        Returns:
            A Page: its rows in ``data``, its ``meta`` (``next_cursor`` and the rest) and the
                response headers; other media types as text.

        Raises:
            ProblemError: on an error answer; the codes it documents:
                400: invalid_request, invalid_cursor
                401: missing_credentials, invalid_key, key_expired, key_revoked, invalid_session
                429: rate_limited, daily_limit, concurrency_limit, ip_fence
                503: service_unavailable
        """
        return self._page(
            self.request(
                "GET",
                "/api/v1/me/ledger",
                query={
                    "limit": limit,
                    "cursor": cursor,
                },
            )
        )

    def iter_get_my_ledger(
        self,
        *,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> Pages:
        """Every page of get_my_ledger() from ``cursor`` (or the first) on, following
        ``meta.next_cursor``: one request per page.

        Takes the arguments of get_my_ledger(); iterate the result for pages, call .rows() for rows or
        .to_pandas() for one DataFrame of them all.
        """
        return Pages(
            lambda next_cursor: self.get_my_ledger(
                limit=limit,
                cursor=next_cursor,
            ),
            cursor,
        )

    def get_my_usage_summary(
        self,
        *,
        days: int | None = None,
    ) -> Any:
        """Usage of the last days: tokens burned and reads per UTC day by channel, and the top
        datasets

        Sums the account's usage events (GET /api/v1/me/usage) from the start of the UTC day `days -
        1` days ago until now. Refunded reads are taken back out.

        GET /api/v1/me/usage/summary (operationId getMyUsageSummary)

        Args:
            days: UTC days, today included: 1 to 90 (default 30).

        Returns:
            The answer: JSON as dicts and lists, any other media type as text, None when empty.

        Raises:
            ProblemError: on an error answer; the codes it documents:
                400: invalid_request
                401: missing_credentials, invalid_key, key_expired, key_revoked, invalid_session
                403: forbidden
                429: rate_limited, daily_limit, concurrency_limit, ip_fence
                503: service_unavailable
        """
        return self._body(
            self.request(
                "GET",
                "/api/v1/me/usage/summary",
                query={
                    "days": days,
                },
            )
        )

    def suggest_entities(
        self,
        domain: str,
        name: str,
    ) -> Any:
        """Values to suggest for a dataset's entity filters (free to call)

        The catalog's values for each entity field (symbols, series ids, market codes): the ones
        sample rows are made of. Imported rows may hold others; any value can be filtered on.

        GET /api/v1/catalog/{domain}/{name}/entities (operationId suggestEntities)

        Args:
            domain: the path parameter domain
            name: the path parameter name

        Returns:
            The answer: JSON as dicts and lists, any other media type as text, None when empty.

        Raises:
            ProblemError: on an error answer; the codes it documents:
                400: invalid_request
                401: invalid_key, key_expired, key_revoked, invalid_session
                404: dataset_not_found
                429: rate_limited, daily_limit, concurrency_limit, ip_fence
                503: service_unavailable
        """
        return self._body(
            self.request(
                "GET",
                self._path("/api/v1/catalog/{domain}/{name}/entities", domain=domain, name=name),
            )
        )

    def stripe_webhook(
        self,
        body: dict[str, Any],
    ) -> Any:
        """Stripe's events (checkout.session.completed, charge.refunded), verified by their
        signature

        POST /api/v1/billing/stripe/webhook (operationId stripeWebhook)

        Args:
            body: The JSON body.

        Returns:
            The answer: JSON as dicts and lists, any other media type as text, None when empty.

        Raises:
            ProblemError: on an error answer; the codes it documents:
                400: invalid_request, invalid_signature, malformed_json
                404: not_found
                409: conflict
                413: payload_too_large
                415: unsupported_media_type
                429: ip_fence
        """
        return self._body(
            self.request(
                "POST",
                "/api/v1/billing/stripe/webhook",
                body=body,
            )
        )

    def mcp_json_rpc(
        self,
        body: dict[str, Any],
    ) -> Any:
        """MCP over Streamable HTTP, stateless: one JSON-RPC message per POST, metered like REST

        Tools over the same keys, ledger and per-key limits as REST. A tools/call refused for its
        own reasons (402, 429, a bad argument) is answered 200 with a result that has isError, its
        code in the text and the problem in _meta["tmd.example/problem"]; the cost headers come with
        a metered call.

        POST /mcp/jsonrpc (operationId mcpJsonRpc)

        Args:
            body: A JSON object. jsonrpc (Any, required); id (str); method (str); params (dict[str,
                Any]).

        Returns:
            The answer: JSON as dicts and lists, any other media type as text, None when empty.

        Raises:
            ProblemError: on an error answer; the codes it documents:
                401: missing_credentials, invalid_key, key_expired, key_revoked, invalid_session
                429: rate_limited, daily_limit, concurrency_limit, ip_fence
                503: service_unavailable
        """
        return self._body(
            self.request(
                "POST",
                "/mcp/jsonrpc",
                body=body,
            )
        )

/** The four cost headers every read answers with, explained. */
export function CostHeaders() {
  return (
    <>
      <h3>The cost headers of every read</h3>
      <dl class="facts">
        <dt>
          <code>X-Token-Cost</code>
        </dt>
        <dd>What the read costs you: list price less your tier discount (×1.35 from the Terminal).</dd>
        <dt>
          <code>X-Request-Tokens</code>
        </dt>
        <dd>Tokens actually burned (0 for a public-test key's free reads).</dd>
        <dt>
          <code>X-Request-Cost-EUR</code>
        </dt>
        <dd>The burn in euros.</dd>
        <dt>
          <code>X-Credits-Remaining</code>
        </dt>
        <dd>Your wallet balance after the read.</dd>
      </dl>
    </>
  );
}

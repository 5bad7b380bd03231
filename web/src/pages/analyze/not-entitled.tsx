/** What the Workbench is, for an account whose package does not bring it. */
import type { ApiError } from '../../api.ts';
import { Link } from '../../router.tsx';

export interface NotEntitledProps {
  /** The 402 analysis_not_entitled refusal, naming the packages that bring the Workbench. */
  error: ApiError;
}

export function NotEntitled({ error }: NotEntitledProps) {
  const packages = Array.isArray(error.problem.packages)
    ? (error.problem.packages as string[])
    : ['workbench'];
  return (
    <section class="notice" aria-labelledby="not-entitled">
      <h2 id="not-entitled">The Workbench is not part of your package</h2>
      <p>
        Analyze holds the Workbench's <strong>analysis composer</strong> (build an analysis from datasets and
        transforms: returns, spreads, rolling statistics, correlations, COT net positions, the Treasury curve;
        see charts and tables) and its <strong>assistant</strong> (ask a question in plain English and get
        that analysis). Every read they make is an ordinary metered read at your Terminal price, within a
        daily fair use.
      </p>
      <p>
        It comes with the{' '}
        <strong>{packages.map((p) => p.charAt(0).toUpperCase() + p.slice(1)).join(' or ')}</strong> package,
        which an operator assigns; it is not part of the free public test.
      </p>
      <p>{error.problem.detail}</p>
      <p>
        <Link href="/packages">Compare the packages</Link>
      </p>
    </section>
  );
}

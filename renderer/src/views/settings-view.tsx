/**
 * Settings: appearance, model providers, approvals, permissions, connections, result size,
 * keychain, activity log, data folder and About, as sections of one scrolling page with an index
 * at the top (every section one click away at 800×600).
 *
 * Every value shown comes from main (`settings:get`); every change goes to main (`settings:set`),
 * which applies it and, for a change that makes Warden ask less, first asks the person in its own
 * dialog. Nothing here can make Always Allow a default: the control does not offer it and the
 * contract refuses it.
 */
import { useEffect, useState, type ReactNode } from 'react';
import type { ThemePreference } from '../../../shared/contract/app';
import type { DefaultToolMode, LedgerCheck } from '../../../shared/contract/settings';
import { ErrorNote, ViewFrame } from '../components/common';
import { useAppStore } from '../store';
import { ModelsPanel } from './models-panel';
import { expiryChoices, formatDuration, isSettableExpiry } from './settings-helpers';

/** The sections, in page order. */
const SECTIONS = [
  { id: 'appearance', title: 'Appearance' },
  { id: 'models', title: 'Models' },
  { id: 'approvals', title: 'Approvals' },
  { id: 'permissions', title: 'Permissions' },
  { id: 'connections', title: 'Connections' },
  { id: 'results', title: 'Tool results' },
  { id: 'keychain', title: 'Keychain' },
  { id: 'ledger', title: 'Activity log' },
  { id: 'data', title: 'Data folder' },
  { id: 'about', title: 'About' },
] as const;
type SectionId = (typeof SECTIONS)[number]['id'];

function Section({ id, children }: { id: SectionId; children: ReactNode }) {
  const title = SECTIONS.find((s) => s.id === id)!.title;
  return (
    <section className="settings-section" id={`settings-${id}`} aria-labelledby={`settings-${id}-title`} data-testid={`settings-${id}`}>
      <h2 id={`settings-${id}-title`} tabIndex={-1}>
        {title}
      </h2>
      {children}
    </section>
  );
}

/** The index at the top: jumps to a section and moves the focus to its heading. */
function SectionIndex() {
  const jump = (id: SectionId) => {
    const heading = document.getElementById(`settings-${id}-title`);
    heading?.scrollIntoView({ block: 'start' });
    heading?.focus({ preventScroll: true });
  };
  return (
    <nav className="settings-index" aria-label="Settings sections">
      <ul>
        {SECTIONS.map((s) => (
          <li key={s.id}>
            <button type="button" className="link" onClick={() => jump(s.id)} data-testid={`settings-jump-${s.id}`}>
              {s.title}
            </button>
          </li>
        ))}
      </ul>
    </nav>
  );
}

const THEME_CHOICES: ReadonlyArray<{ preference: ThemePreference; label: string; explain: string }> = [
  { preference: 'system', label: 'Same as the system', explain: 'Light or dark as your system is set, switching when it does.' },
  { preference: 'light', label: 'Light', explain: 'Always light.' },
  { preference: 'dark', label: 'Dark', explain: 'Always dark.' },
];

const DARK_QUERY = '(prefers-color-scheme: dark)';

/**
 * Whether the page is drawn dark right now: the same media query the stylesheets follow (which
 * main drives through nativeTheme), so "Right now" always names what the person is looking at.
 */
function useDrawnDark(): boolean {
  const [dark, setDark] = useState(() => globalThis.matchMedia?.(DARK_QUERY).matches ?? false);
  useEffect(() => {
    const query = globalThis.matchMedia?.(DARK_QUERY);
    if (!query) return;
    const update = () => setDark(query.matches);
    update();
    query.addEventListener('change', update);
    return () => query.removeEventListener('change', update);
  }, []);
  return dark;
}

function AppearanceSection() {
  const theme = useAppStore((s) => s.theme);
  const drawnDark = useDrawnDark();
  const setTheme = useAppStore((s) => s.setTheme);
  return (
    <Section id="appearance">
      <fieldset className="field settings-choices" disabled={!theme} data-testid="settings-theme">
        <legend>Theme</legend>
        {THEME_CHOICES.map((c) => (
          <label className="choice" key={c.preference}>
            <input
              type="radio"
              name="theme"
              value={c.preference}
              checked={theme?.preference === c.preference}
              data-testid={`settings-theme-${c.preference}`}
              onChange={() => void setTheme(c.preference)}
            />
            <span>
              <strong>{c.label}</strong>
              <span className="choice-explain">
                {c.explain}
                {c.preference === 'system' && theme?.preference === 'system' ? ` Right now: ${drawnDark ? 'dark' : 'light'}.` : ''}
              </span>
            </span>
          </label>
        ))}
      </fieldset>
      <p className="muted small">Menus and Warden's own dialogs follow the same choice.</p>
    </Section>
  );
}

function ModelsSection() {
  return (
    <Section id="models">
      <p className="muted">
        The model providers you can chat with. Your conversation goes to the provider you pick; the tools it may use and every approval stay
        decided by Warden, whichever model you choose. API keys are kept in your system keychain and only ever sent to the host you entered them
        for.
      </p>
      <ModelsPanel />
    </Section>
  );
}

function ApprovalsSection() {
  const settings = useAppStore((s) => s.settings);
  const saving = useAppStore((s) => s.settingsSaving);
  const change = useAppStore((s) => s.changeSettings);
  if (!settings) return <Section id="approvals">{null}</Section>;
  const { expiryMs, defaultExpiryMs } = settings.approvals;
  return (
    <Section id="approvals">
      <label className="field settings-field">
        <span>A call waiting for your approval expires after</span>
        <select
          className="input"
          value={expiryMs}
          disabled={saving}
          data-testid="settings-approval-expiry"
          onChange={(e) => void change({ approvalExpiryMs: Number(e.target.value) })}
        >
          {expiryChoices(expiryMs).map((ms) => (
            <option key={ms} value={ms} disabled={!isSettableExpiry(ms)}>
              {formatDuration(ms)}
              {ms === defaultExpiryMs ? ' (default)' : ''}
            </option>
          ))}
        </select>
      </label>
      <p className="muted small">
        An expired call is never sent; the model is told it was not approved. A new time applies to calls that start waiting from now on; calls
        already waiting keep theirs.
      </p>
    </Section>
  );
}

const MODE_CHOICES: ReadonlyArray<{ mode: DefaultToolMode; label: string; explain: string }> = [
  { mode: 'ask', label: 'Ask every time', explain: 'Models may propose calls of these tools; each call waits for you in Warden’s dialog. Recommended.' },
  { mode: 'disabled', label: 'Disabled', explain: 'Models do not see these tools at all, and any call of one is refused. Give a tool its own mode in Permissions to use it.' },
];

function PermissionsSection() {
  const settings = useAppStore((s) => s.settings);
  const saving = useAppStore((s) => s.settingsSaving);
  const change = useAppStore((s) => s.changeSettings);
  const current = settings?.permissions.defaultToolMode;
  return (
    <Section id="permissions">
      <fieldset className="field settings-choices" disabled={!settings || saving} data-testid="settings-default-mode">
        <legend>Tools you have not set a mode for</legend>
        {MODE_CHOICES.map((c) => (
          <label className="choice" key={c.mode}>
            <input
              type="radio"
              name="default-tool-mode"
              value={c.mode}
              checked={current === c.mode}
              data-testid={`settings-default-mode-${c.mode}`}
              onChange={() => void change({ defaultToolMode: c.mode })}
            />
            <span>
              <strong>{c.label}</strong>
              <span className="choice-explain">{c.explain}</span>
            </span>
          </label>
        ))}
      </fieldset>
      <p className="muted small">
        Always Allow is never a default: a tool you have not looked at can never run without asking. Going back from Disabled to Ask is confirmed
        in Warden’s own dialog.
      </p>
    </Section>
  );
}

function ConnectionsSection() {
  const navigate = useAppStore((s) => s.navigate);
  return (
    <Section id="connections">
      <p data-testid="settings-connections-note">
        Each server has its own on/off switch in Servers. Servers that are on connect when Warden starts, all at once; one that fails tries again
        after a growing pause, and you can restart it there.
      </p>
      <div className="form-actions">
        <button type="button" className="button" onClick={() => navigate('servers')} data-testid="settings-open-servers">
          Open Servers
        </button>
      </div>
    </Section>
  );
}

function ResultsSection() {
  return (
    <Section id="results">
      <p>Every tool result is cleaned before you or a model see it: terminal control codes and invisible characters are removed.</p>
      <p className="muted small" data-testid="settings-results-note">
        A size limit for tool results cannot be set in this version.
      </p>
    </Section>
  );
}

function KeychainSection() {
  const keychain = useAppStore((s) => s.settings?.keychain);
  return (
    <Section id="keychain">
      {keychain ? (
        <p className={keychain.available ? 'ok-note' : 'error-note'} data-testid="settings-keychain-status" data-available={keychain.available ? 'true' : 'false'}>
          <strong>{keychain.available ? 'Available. ' : 'Unavailable. '}</strong>
          {keychain.detail}
        </p>
      ) : null}
      <p className="muted small">API keys, tokens and secret environment values live only there. If the keychain is unavailable, Warden refuses to store a secret rather than write it to a file.</p>
    </Section>
  );
}

function LedgerResult({ check }: { check: LedgerCheck }) {
  const ok = check.outcome === 'intact';
  return (
    <p className={check.outcome === 'damaged' ? 'error-note' : ok ? 'ok-note' : 'callout'} role="status" data-testid="settings-ledger-result" data-outcome={check.outcome}>
      {check.summary} <span className="small">(checked {new Date(check.checkedAt).toLocaleTimeString()}, {check.durationMs} ms)</span>
    </p>
  );
}

/**
 * The only way out of safe mode: a reason the person writes (it is recorded in the log), then
 * main's native dialog. The renderer asks; it cannot leave safe mode on its own.
 */
function LeaveSafeMode() {
  const [reason, setReason] = useState('');
  const [missing, setMissing] = useState(false);
  const leaving = useAppStore((s) => s.safeModeLeaving);
  const error = useAppStore((s) => s.safeModeError);
  const leave = useAppStore((s) => s.leaveSafeMode);
  const submit = async () => {
    if (reason.trim() === '') {
      setMissing(true);
      return;
    }
    setMissing(false);
    if (await leave(reason.trim())) setReason('');
  };
  return (
    <form
      className="form"
      data-testid="settings-leave-safe-mode"
      onSubmit={(e) => {
        e.preventDefault();
        void submit();
      }}
    >
      <p>
        Before leaving safe mode, compare the damaged records with a copy you trust (Check now lists where they are). Leaving safe mode lets tools
        set to Always Allow run without asking again.
      </p>
      <div className="field">
        <label htmlFor="settings-safe-mode-reason">Why it is safe to leave safe mode (recorded in the log)</label>
        <textarea
          id="settings-safe-mode-reason"
          rows={2}
          maxLength={2000}
          value={reason}
          aria-invalid={missing}
          aria-describedby={missing ? 'settings-safe-mode-reason-error' : undefined}
          onChange={(e) => setReason(e.target.value)}
          data-testid="settings-safe-mode-reason"
        />
        {missing ? (
          <p className="field-problem" id="settings-safe-mode-reason-error" role="alert" data-testid="settings-safe-mode-reason-error">
            Write a reason first: it is recorded with the acknowledgement.
          </p>
        ) : null}
      </div>
      <div className="form-actions">
        <button type="submit" className="button button-danger" disabled={leaving} data-testid="settings-leave-safe-mode-submit">
          {leaving ? 'Waiting for your confirmation…' : 'Leave safe mode…'}
        </button>
      </div>
      <ErrorNote error={error} testId="settings-safe-mode-error" />
    </form>
  );
}

function LedgerSection() {
  const ledger = useAppStore((s) => s.settings?.ledger);
  // Live, like the count: the background check can find damage after this page was read.
  const safeMode = useAppStore((s) => s.status?.safeMode ?? s.settings?.ledger.safeMode ?? false);
  // The live count from the core status (the settings snapshot is read once when the page opens).
  const records = useAppStore((s) => s.status?.journal.records ?? s.settings?.ledger.records ?? 0);
  const acknowledged = useAppStore((s) => s.safeModeAcknowledged);
  const check = useAppStore((s) => s.ledgerCheck);
  const checkError = useAppStore((s) => s.ledgerCheckError);
  const checking = useAppStore((s) => s.ledgerChecking);
  const verify = useAppStore((s) => s.verifyLedger);
  return (
    <Section id="ledger">
      <p>
        Every decision and every call is recorded in Warden's activity log. Each record carries a checksum sealed with a key kept in your
        system keychain, and the checksum of the record before it, so a change anywhere breaks the chain, even if the checksums after it are
        recomputed by someone who cannot read your keychain. Warden also keeps, in the keychain, the last record it saved, so removing the newest
        records or putting back an older copy is found too (except what was written in the last second or so before it). Records from before
        the log had a key show damage, not a deliberate rewrite. When Warden starts it checks the records written since the last start and that
        last record, then the whole chain in the background; a problem found at any time holds every tool at Ask.
      </p>
      {ledger ? (
        <dl className="facts">
          <dt>State</dt>
          <dd data-testid="settings-ledger-state">
            {safeMode
              ? 'Damage was found: every tool asks until the damage is acknowledged.'
              : acknowledged
                ? 'Damage acknowledged: tools follow your rules again. The damaged records stay in the log, and Check now still lists them.'
                : ledger.kind === 'memory'
                  ? 'Kept in memory only: nothing is saved to disk.'
                  : 'No damage found.'}
          </dd>
          <dt>Records</dt>
          <dd data-testid="settings-ledger-records">{records.toLocaleString()}</dd>
          {ledger.dir ? (
            <>
              <dt>Folder</dt>
              <dd className="mono small">{ledger.dir}</dd>
            </>
          ) : null}
        </dl>
      ) : null}
      {safeMode ? <LeaveSafeMode /> : null}
      <div className="form-actions">
        <button type="button" className="button" disabled={checking} onClick={() => void verify()} data-testid="settings-ledger-verify">
          {checking ? 'Checking…' : 'Check now'}
        </button>
      </div>
      {check ? <LedgerResult check={check} /> : null}
      <ErrorNote error={checkError} testId="settings-ledger-error" />
    </Section>
  );
}

function DataSection() {
  const settings = useAppStore((s) => s.settings);
  return (
    <Section id="data">
      {settings ? (
        <dl className="facts">
          <dt>Folder</dt>
          <dd className="mono small" data-testid="settings-data-folder">
            {settings.dataFolder ?? 'Not reported by this host.'}
          </dd>
          <dt>Settings file</dt>
          <dd className="mono small">{settings.settingsFile.path}</dd>
        </dl>
      ) : null}
      {settings?.settingsFile.problem ? <p className="error-note">{settings.settingsFile.problem}</p> : null}
      <p className="muted small">Your servers, rules, model providers and the activity log are kept there. Secrets are not: they are in the keychain.</p>
    </Section>
  );
}

interface LicenseEntry {
  name: string;
  version: string;
  license: string;
  where: 'runtime' | 'window' | 'app';
}

const WHERE_WORDS: Record<LicenseEntry['where'], string> = { runtime: 'runtime', window: 'window', app: 'app' };

function AboutSection() {
  const about = useAppStore((s) => s.settings?.about);
  const [licenses, setLicenses] = useState<LicenseEntry[] | null>(null);
  const [licenseProblem, setLicenseProblem] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    // Written by the build (scripts/licenses.ts) next to the page.
    fetch('./licenses.json')
      .then((r) => (r.ok ? (r.json() as Promise<LicenseEntry[]>) : Promise.reject(new Error(`HTTP ${r.status}`))))
      .then((list) => live && setLicenses(list))
      .catch((e: unknown) => live && setLicenseProblem(`The licence list could not be read (${e instanceof Error ? e.message : String(e)}).`));
    return () => {
      live = false;
    };
  }, []);
  const runtime: Array<[string, string | undefined]> = [
    ['Electron', about?.versions.electron],
    ['Chromium', about?.versions.chrome],
    ['Node.js', about?.versions.node],
    ['V8', about?.versions.v8],
  ];
  return (
    <Section id="about">
      {about ? (
        <dl className="facts" data-testid="settings-about-facts">
          <dt>Warden</dt>
          <dd data-testid="settings-version">{about.version}</dd>
          <dt>System</dt>
          <dd>
            {about.platform} ({about.arch})
          </dd>
          {runtime
            .filter(([, v]) => v)
            .map(([label, v]) => (
              <div key={label} className="facts-row">
                <dt>{label}</dt>
                <dd>{v}</dd>
              </div>
            ))}
        </dl>
      ) : null}
      {licenses ? (
        <details className="licenses" data-testid="settings-licenses">
          <summary>Open-source licences of the {licenses.length} packages Warden ships</summary>
          <p className="muted small">
            Read from each package's own declaration when this Warden was built. Runtime: Electron, which includes Chromium and Node.js; window: bundled
            into this window; app: installed with the app.
          </p>
          <div className="table-scroll" tabIndex={0} role="region" aria-label="Licences">
            <table className="table">
              <thead>
                <tr>
                  <th scope="col">Package</th>
                  <th scope="col">Version</th>
                  <th scope="col">Licence</th>
                  <th scope="col">Part</th>
                </tr>
              </thead>
              <tbody>
                {licenses.map((l) => (
                  <tr key={`${l.name}@${l.version}`}>
                    <td>{l.name}</td>
                    <td>{l.version}</td>
                    <td>{l.license}</td>
                    <td>{WHERE_WORDS[l.where]}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </details>
      ) : licenseProblem ? (
        <p className="muted small">{licenseProblem}</p>
      ) : null}
    </Section>
  );
}

/** The Settings view. */
export function SettingsView() {
  const refreshSettings = useAppStore((s) => s.refreshSettings);
  const watchSettings = useAppStore((s) => s.watchSettings);
  const error = useAppStore((s) => s.settingsError);
  const section = useAppStore((s) => s.settingsSection);
  const sectionShown = useAppStore((s) => s.settingsSectionShown);
  useEffect(() => {
    const off = watchSettings();
    void refreshSettings();
    return off;
  }, [refreshSettings, watchSettings]);
  // Opened at a section (e.g. Models from the Chat welcome): bring it into view and focus its heading.
  useEffect(() => {
    if (!section) return;
    const heading = document.getElementById(`settings-${section}-title`);
    heading?.scrollIntoView({ block: 'start' });
    heading?.focus({ preventScroll: true });
    sectionShown();
  }, [section, sectionShown]);
  return (
    <ViewFrame id="settings" title="Settings" note={<SectionIndex />}>
      <ErrorNote error={error} testId="settings-error" />
      <AppearanceSection />
      <ModelsSection />
      <ApprovalsSection />
      <PermissionsSection />
      <ConnectionsSection />
      <ResultsSection />
      <KeychainSection />
      <LedgerSection />
      <DataSection />
      <AboutSection />
    </ViewFrame>
  );
}

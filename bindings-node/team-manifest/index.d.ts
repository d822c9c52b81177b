// @ctliz/agent-intercom-core/team-manifest: the tmuxdeck team manifest (see docs/team-manifest.md).
// Literal facts come from ../facts.js, which `cargo xtask gen` writes from the Rust crates.
import type {
  MaxTeamManifestMembers, TmuxdeckTeamManifestBackend, TmuxdeckTeamManifestVersion,
} from "../facts.js";

/** The manifest's version field. */
export declare const TMUXDECK_TEAM_MANIFEST_VERSION: TmuxdeckTeamManifestVersion;
/** The manifest's backend field. */
export declare const TMUXDECK_TEAM_MANIFEST_BACKEND: TmuxdeckTeamManifestBackend;
/** The largest manifest file, in bytes (64 KiB). */
export declare const MAX_TEAM_MANIFEST_BYTES: number;
/** The most members a team may list. */
export declare const MAX_TEAM_MANIFEST_MEMBERS: MaxTeamManifestMembers;

/** A member's role: the one lead (whose session is `leadId`) or a worker. */
export type TmuxDeckTeamRole = "lead" | "worker";

/** One member of the team. */
export interface TmuxDeckTeamMember {
  /** `tmuxdeck-<uuid v4>`. */
  sessionId: string;
  role: TmuxDeckTeamRole;
}

/** A valid team manifest, as the parser returns it (a fresh object). */
export interface TmuxDeckTeamManifest {
  version: typeof TMUXDECK_TEAM_MANIFEST_VERSION;
  backend: typeof TMUXDECK_TEAM_MANIFEST_BACKEND;
  /** `team_<uuid v4>`. */
  runId: string;
  /** `tmuxdeck-<uuid v4>`; exactly one member has this session id, with role `lead`. */
  leadId: string;
  /** 1 to MAX_TEAM_MANIFEST_MEMBERS members with distinct session ids. */
  members: TmuxDeckTeamMember[];
  /** Milliseconds since the epoch: a safe integer above 0. */
  createdAt: number;
  /** Always empty in this version. */
  capabilities: readonly [];
}

/** INVALID: the manifest (or the path given for it) is malformed. UNAVAILABLE: the file or its
 * directory cannot be used (missing, unreadable, a symlink, too large, wrong owner or mode). */
export type TeamManifestErrorCode =
  | "ERR_TEAM_MANIFEST_UNAVAILABLE"
  | "ERR_TEAM_MANIFEST_INVALID";

/** Every refusal: `message` is the code; no path or value is ever included. */
export declare class TeamManifestError extends Error {
  readonly code: TeamManifestErrorCode;
  constructor(code: TeamManifestErrorCode);
}

/** Parses a JSON text (as JSON.parse reads it) or a value into a manifest. Proxies, accessors,
 * sparse arrays, symbol keys and unknown keys are refused without being entered or run. */
export declare function parseTeamManifest(value: unknown): TmuxDeckTeamManifest;

/** Reads the manifest at `filePath` (trimmed, absolute), or undefined when no path is given
 * (undefined, null or blank). The directory must be a real directory owned by this user with
 * mode 0700; the file a regular file owned by this user with mode 0600, at most
 * MAX_TEAM_MANIFEST_BYTES. */
export declare function readTeamManifest(filePath?: string | null): TmuxDeckTeamManifest | undefined;

/** readTeamManifest, asynchronously. */
export declare function readTeamManifestAsync(
  filePath?: string | null,
): Promise<TmuxDeckTeamManifest | undefined>;

import Foundation
import FreshetLMDB

extension StoreFiles {
    /// Checks `directory/data.mdb` page by page before LMDB maps it (``DataFile/check()``), so a
    /// damaged file is a typed error instead of a `SIGSEGV` or `SIGBUS` inside liblmdb.
    /// A missing or empty file is left to the other checks (a new store is created there).
    /// - Throws: ``StoreError/notAStore`` when the file is not LMDB's at all (no magic on
    ///   meta page 0); ``StoreError/corrupted`` naming the page and what is wrong with it;
    ///   ``StoreError/permissionDenied`` or ``StoreError/storage`` when the file cannot be opened.
    static func checkDataFile(directory: String, shownAs shown: String? = nil) throws(StoreError) {
        let path = directory + "/data.mdb"
        let named = (shown ?? directory) + "/data.mdb"
        guard let file = try identity(of: path), file.size > 0, (file.mode & S_IFMT) == S_IFREG else { return }
        let data: DataFile
        do {
            data = try DataFile(path: path)
        } catch {
            throw Self.error(error.code, "cannot open \(named) to check it")
        }
        do {
            _ = try data.check()
        } catch where error.isNotLMDB {
            throw StoreError(.notAStore, "\(named) is not an LMDB file (\(error)); it is left as it is")
        } catch {
            throw StoreError(.corrupted, "\(named) is damaged (\(error)); nothing was opened. Store.recoverDamaged(directory:) moves it aside and starts an empty store")
        }
    }
}
